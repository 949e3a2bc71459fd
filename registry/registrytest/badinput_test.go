package registrytest_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/promscope/promscope/registry"
	"github.com/promscope/promscope/registry/registrytest"
)

// badT records what the helpers report.
type badT struct{ errs []string }

func (*badT) Helper() {}

func (b *badT) Errorf(format string, args ...any) {
	b.errs = append(b.errs, fmt.Sprintf(format, args...))
}

func badPanic(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// badFailing is a Gatherer whose Gather fails.
type badFailing struct{}

func (badFailing) Gather() ([]*dto.MetricFamily, error) {
	return nil, errors.New("scrape refused")
}

// badCloser is a component whose Close fails, or panics when it is nil.
type badCloser struct{ err error }

func (c *badCloser) Close() error { return c.err }

func badGauge(name string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "Gauge " + name + "."})
}

func TestBadInputPanics(t *testing.T) {
	tests := []struct {
		name string
		give func()
	}{
		{name: "VerifyNone with a nil Gatherer", give: func() { registrytest.VerifyNone(&badT{}, nil) }},
		{name: "VerifyRecycle with a nil build", give: func() {
			registrytest.VerifyRecycle[io.Closer](&badT{}, 3, nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" panics with a \"registrytest:\" message", func(t *testing.T) {
			v := badPanic(tt.give)
			if msg, ok := v.(string); !ok || !strings.HasPrefix(msg, "registrytest: ") {
				t.Errorf("panicked with %#v", v)
			}
		})
	}
}

func TestBadInputVerifyNone(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(badGauge("go_thing"), badGauge("kept"))
	closed := registry.NewScope(reg)
	closed.MustRegister(badGauge("gone"))
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		g      prometheus.Gatherer
		ignore []string
		// want are substrings each of which one reported failure
		// holds; none means no failure.
		want []string
	}{
		{name: "a Gatherer whose Gather fails", g: badFailing{}, want: []string{"registrytest: gather failed: scrape refused"}},
		{name: "a closed scope", g: closed},
		{name: "an empty ignore pattern", g: reg, ignore: []string{""}, want: []string{"go_thing", "kept"}},
		{name: "a lone star", g: reg, ignore: []string{"*"}},
		{name: "a star in the middle, taken literally", g: reg, ignore: []string{"go_*ing", "kept"}, want: []string{"go_thing"}},
		{name: "a pattern that names a metric exactly", g: reg, ignore: []string{"go_thing", "kept"}},
	}
	for _, tt := range tests {
		t.Run("VerifyNone with "+tt.name+" reports exactly what is there", func(t *testing.T) {
			bt := &badT{}
			registrytest.VerifyNone(bt, tt.g, tt.ignore...)
			if len(tt.want) == 0 && len(bt.errs) > 0 {
				t.Errorf("reported %q, want nothing", bt.errs)
			}
			if len(tt.want) > 0 && len(bt.errs) != 1 {
				t.Fatalf("reported %q, want one failure", bt.errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(bt.errs[0], w) {
					t.Errorf("reported %q, want it to name %q", bt.errs[0], w)
				}
			}
		})
	}
}

func TestBadInputVerifyRecycle(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		build func(prometheus.Registerer) (*badCloser, error)
		// wantCalls is how many times build must run; want is a
		// substring of the one failure reported, or "" for none.
		wantCalls int
		want      string
	}{
		{
			name:  "zero rounds",
			n:     0,
			build: func(prometheus.Registerer) (*badCloser, error) { return &badCloser{}, nil },
		},
		{
			name:  "a negative number of rounds",
			n:     -2,
			build: func(prometheus.Registerer) (*badCloser, error) { return &badCloser{}, nil },
		},
		{
			name:      "a build that panics",
			n:         3,
			build:     func(prometheus.Registerer) (*badCloser, error) { panic("boom") },
			wantCalls: 1,
			want:      "registrytest: round 1 of 3: build panicked: boom",
		},
		{
			name:      "a value whose Close fails",
			n:         3,
			build:     func(prometheus.Registerer) (*badCloser, error) { return &badCloser{err: io.ErrClosedPipe}, nil },
			wantCalls: 1,
			want:      "registrytest: round 1 of 3: close: io: read/write on closed pipe",
		},
		{
			name: "a nil value with no error, whose Close panics",
			n:    3,
			build: func(prometheus.Registerer) (*badCloser, error) {
				return nil, nil
			},
			wantCalls: 1,
			want:      "registrytest: round 1 of 3: close panicked: runtime error",
		},
		{
			name: "a build that leaks a registration and fails",
			n:    3,
			build: func(reg prometheus.Registerer) (*badCloser, error) {
				reg.MustRegister(badGauge("leaked"))
				return nil, io.ErrUnexpectedEOF
			},
			wantCalls: 1,
			want:      `registrytest: round 1 of 3: after build failed with "unexpected EOF": 1 metric families still exposed: leaked`,
		},
		{
			name: "a build that fails every time, cleanly",
			n:    3,
			build: func(prometheus.Registerer) (*badCloser, error) {
				return nil, io.ErrUnexpectedEOF
			},
			wantCalls: 3,
		},
	}
	for _, tt := range tests {
		t.Run("VerifyRecycle with "+tt.name+" runs the rounds it should and names the first failure", func(t *testing.T) {
			bt := &badT{}
			calls := 0
			registrytest.VerifyRecycle(bt, tt.n, func(reg prometheus.Registerer) (*badCloser, error) {
				calls++
				return tt.build(reg)
			})
			if calls != tt.wantCalls {
				t.Errorf("build ran %d times, want %d", calls, tt.wantCalls)
			}
			switch {
			case tt.want == "" && len(bt.errs) > 0:
				t.Errorf("reported %q, want nothing", bt.errs)
			case tt.want != "" && (len(bt.errs) != 1 || !strings.HasPrefix(bt.errs[0], tt.want)):
				t.Errorf("reported %q, want one failure starting %q", bt.errs, tt.want)
			}
		})
	}
}
