// Package go127 holds code in the Go 1.27 language: its file builds only
// with Go 1.27 or later, where the leak in it is reported like any other.
package go127
