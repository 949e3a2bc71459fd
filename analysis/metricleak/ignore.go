package metricleak

import (
	"go/ast"
	"go/token"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// ignores are the //lint:ignore and //lint:file-ignore directives of a
// package that name metricleak, in staticcheck's form:
//
//	//lint:ignore metricleak the process exits when this fails
//	//lint:file-ignore metricleak these tests leak on purpose
//
// The first silences a report on the line after the directive, the second
// every report in its file. A directive must give a reason after the
// check's name; one that does not is not honoured, and is reported.
type ignores struct {
	lines map[lineKey]bool // the lines after a //lint:ignore
	files map[string]bool  // the files with a //lint:file-ignore
}

type lineKey struct {
	file string
	line int
}

// findIgnores collects the directives in the files of pass, and reports
// those that name metricleak without giving a reason.
func findIgnores(pass *analysis.Pass) *ignores {
	ig := &ignores{lines: map[lineKey]bool{}, files: map[string]bool{}}
	for _, f := range pass.Files {
		for _, group := range f.Comments {
			for _, cm := range group.List {
				ig.add(pass, cm)
			}
		}
	}
	return ig
}

func (ig *ignores) add(pass *analysis.Pass, cm *ast.Comment) {
	text, ok := strings.CutPrefix(cm.Text, "//lint:")
	if !ok {
		return
	}
	fields := strings.Fields(text)
	if len(fields) == 0 || fields[0] != "ignore" && fields[0] != "file-ignore" {
		return
	}
	if len(fields) < 2 || !slices.Contains(strings.Split(fields[1], ","), "metricleak") {
		return
	}
	if len(fields) < 3 {
		pass.Report(analysis.Diagnostic{
			Pos:     cm.Pos(),
			End:     cm.End(),
			Message: "this //lint:" + fields[0] + " directive has no reason, so it is not honoured: write //lint:" + fields[0] + " metricleak followed by why",
		})
		return
	}
	pos := pass.Fset.Position(cm.Pos())
	if fields[0] == "file-ignore" {
		ig.files[pos.Filename] = true
		return
	}
	end := pass.Fset.Position(cm.End())
	ig.lines[lineKey{end.Filename, end.Line + 1}] = true
}

// ignored reports whether a directive silences a report at pos.
func (ig *ignores) ignored(fset *token.FileSet, pos token.Pos) bool {
	p := fset.Position(pos)
	return ig.files[p.Filename] || ig.lines[lineKey{p.Filename, p.Line}]
}

// report reports d unless a directive silences it.
func (c *checker) report(d analysis.Diagnostic) {
	if c.ignores.ignored(c.pass.Fset, d.Pos) {
		return
	}
	c.pass.Report(d)
}
