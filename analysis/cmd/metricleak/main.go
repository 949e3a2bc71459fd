package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/promscope/promscope/analysis/metricleak"
)

func main() { singlechecker.Main(metricleak.Analyzer) }
