// Command metricleak reports error returns that leave registered Prometheus
// metrics behind: the constructor leak that promscope's registry.Scope
// fixes. See package [github.com/promscope/promscope/analysis/metricleak]
// for the rules.
//
// # Usage
//
// Install it from a clone of promscope (no version is released yet), then
// run it on the packages of any module, or as go vet's tool:
//
//	(cd analysis && go install ./cmd/metricleak)
//	metricleak ./...
//	go vet -vettool=$(which metricleak) ./...
//
// -fix applies the suggested fixes instead of printing the reports, and
// -commands checks packages main too.
//
// It exits with status 3 when it reports something, 1 on an error, and 0
// otherwise (after -fix too), as every command built on singlechecker does.
package main
