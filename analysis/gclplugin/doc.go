// Package gclplugin makes [metricleak.Analyzer] a golangci-lint v2 module
// plugin named metricleak. Importing the package registers the plugin; it
// has no other API than the constructor golangci-lint calls, [New].
//
// # Usage
//
// golangci-lint runs a module plugin from a custom binary that
// `golangci-lint custom` builds. Describe that binary in .custom-gcl.yml at
// the root of the module to check:
//
//	version: v2.15.0
//	name: custom-gcl
//	plugins:
//	  - module: github.com/promscope/promscope/analysis
//	    import: github.com/promscope/promscope/analysis/gclplugin
//	    version: latest
//
// (for a local checkout of promscope, give path: with the directory of the
// analysis module instead of version:), and enable the plugin in
// .golangci.yml:
//
//	version: "2"
//	linters:
//	  enable:
//	    - metricleak
//	  settings:
//	    custom:
//	      metricleak:
//	        type: module
//	        description: error returns that leave registered Prometheus metrics behind
//	        original-url: https://github.com/promscope/promscope/tree/main/analysis
//
// Then build the binary and run it as golangci-lint:
//
//	golangci-lint custom   # writes ./custom-gcl
//	./custom-gcl run ./...
//
// Reports are the metricleak command's, at the same positions, marked
// (metricleak); golangci-lint exits with status 1 when there are any. The
// plugin asks golangci-lint to load packages with type information, which
// the analyzer needs to build SSA and to carry facts from a package to
// those that import it.
//
// # Settings
//
// A settings mapping under the plugin's entry in .golangci.yml, beside
// type:, sets the analyzer's flags. Each key names one of the analyzer's
// own flags, as the metricleak command takes it but without the dash (the
// error for an unknown key lists them); each value is given to the flag as
// a command line would give it, so a boolean flag takes true or false. A
// flag that is not set keeps its default. To check package main too:
//
//	metricleak:
//	  type: module
//	  settings:
//	    commands: true
//
// # Errors
//
// golangci-lint stops before it analyses anything, with an error that
// names the setting, if a setting is not one of the analyzer's flags, has
// no value, has a list or a mapping for its value, or has a value its flag
// rejects.
//
// # Registration
//
// The plugin registers itself in an init function, the one init function
// in promscope: golangci-lint's custom binary only imports the package for
// its side effects and then looks the plugin up by name, so the package
// must register it as it initialises.
package gclplugin
