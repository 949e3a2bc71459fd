package promtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promscope/promscope/internal/describe"
)

// ErrInjected is what a Parent's Register returns for a call its script
// fails, and what a call that its script makes panic panics with.
var ErrInjected = errors.New("injected register failure")

// A Fault is what a Parent does with one call.
type Fault int

// The faults a Parent's script may choose.
const (
	Pass        Fault = iota // pass the call on to the registry
	Fail                     // Register: return ErrInjected, register nothing
	Claim                    // Register: answer that Stranger holds the identity
	ClaimNobody              // Register: answer that somebody, unnamed, holds it
	Refuse                   // Unregister: return false, keep the collector
	LieKept                  // Unregister: return true, keep the collector
	LieRemoved               // Unregister: remove the collector, return false
	Block                    // wait until Release, then pass the call on
	BlockAfter               // pass the call on, then wait until Release to return
	Panicking                // panic with ErrInjected, touching nothing
	PanicAfter               // pass the call on, then panic with ErrInjected
	Must                     // Register: pass the call on, and panic with its error, if any, as one built on MustRegister does
)

// A Call is one call that a Parent receives.
type Call struct {
	Op    string // "register" or "unregister"
	Names string // the metric names the collector describes, comma-separated
	N     int    // how many calls with this Op and Names came before
}

// Parent is a prometheus.Registerer that passes every call on to Reg, a
// pedantic registry, unless Script makes a fault of it, and logs every call
// and its outcome.
type Parent struct {
	Reg      *prometheus.Registry
	Next     prometheus.Registerer // where calls are passed on; Reg when nil
	Script   func(Call) Fault      // nil passes every call
	Stranger prometheus.Collector  // what Claim names as the holder
	Entered  chan Call             // receives each call that blocks, before it waits

	release chan struct{}
	once    sync.Once

	mu    sync.Mutex
	count map[string]int // guarded by mu; by Op and Names
	log   []string       // guarded by mu
}

var _ prometheus.Registerer = (*Parent)(nil)

// NewParent returns a Parent over a fresh pedantic registry.
func NewParent(script func(Call) Fault) *Parent {
	return &Parent{
		Reg:     prometheus.NewPedanticRegistry(),
		Script:  script,
		Entered: make(chan Call, 16),
		release: make(chan struct{}),
		count:   map[string]int{},
	}
}

// On returns a script that makes fault of the n-th call (from 0; -1 for
// every call) with op for names, and passes every other call.
func On(op, names string, n int, fault Fault) func(Call) Fault {
	return func(c Call) Fault {
		if c.Op == op && c.Names == names && (n < 0 || c.N == n) {
			return fault
		}
		return Pass
	}
}

// Release lets every call that blocks, now or later, go on.
func (p *Parent) Release() { p.once.Do(func() { close(p.release) }) }

// Log returns the calls so far, "op names: outcome" each, in order.
func (p *Parent) Log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.log)
}

func (p *Parent) fault(op string, c prometheus.Collector) (Call, Fault) {
	call := Call{Op: op, Names: strings.Join(describe.Names(describe.Descs(c)), ",")}
	p.mu.Lock()
	call.N = p.count[op+" "+call.Names]
	p.count[op+" "+call.Names]++
	p.mu.Unlock()
	f := Pass
	if p.Script != nil {
		f = p.Script(call)
	}
	if f == Block {
		p.hold(call)
	}
	return call, f
}

func (p *Parent) note(c Call, outcome string) {
	p.mu.Lock()
	p.log = append(p.log, fmt.Sprintf("%s %s: %s", c.Op, c.Names, outcome))
	p.mu.Unlock()
}

func (p *Parent) next() prometheus.Registerer {
	if p.Next != nil {
		return p.Next
	}
	return p.Reg
}

// Record adds entry to the log, for a test that logs its own events among
// the parent's calls.
func (p *Parent) Record(entry string) {
	p.mu.Lock()
	p.log = append(p.log, entry)
	p.mu.Unlock()
}

// Holds reports whether reg holds the identity of a kit gauge named name:
// whether an equal gauge fails to register.
func Holds(reg *prometheus.Registry, name string) bool {
	g := Gauge(name, 0)
	if err := reg.Register(g); err != nil {
		return true
	}
	reg.Unregister(g)
	return false
}

// Register implements prometheus.Registerer.
func (p *Parent) Register(c prometheus.Collector) error {
	call, f := p.fault("register", c)
	switch f {
	case Panicking:
		p.note(call, "panicked")
		panic(ErrInjected)
	case Fail:
		p.note(call, "failed")
		return ErrInjected
	case Claim:
		p.note(call, "claimed by a stranger")
		return prometheus.AlreadyRegisteredError{ExistingCollector: p.Stranger, NewCollector: c}
	case ClaimNobody:
		p.note(call, "claimed by nobody named")
		return prometheus.AlreadyRegisteredError{NewCollector: c}
	}
	err := p.next().Register(c)
	p.note(call, fmt.Sprint(err))
	switch f {
	case BlockAfter:
		p.hold(call)
	case PanicAfter:
		panic(ErrInjected)
	case Must:
		if err != nil {
			panic(err)
		}
	}
	return err
}

// MustRegister implements prometheus.Registerer.
func (p *Parent) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := p.Register(c); err != nil {
			panic(err)
		}
	}
}

// Unregister implements prometheus.Registerer.
func (p *Parent) Unregister(c prometheus.Collector) bool {
	call, f := p.fault("unregister", c)
	switch f {
	case Panicking:
		p.note(call, "panicked")
		panic(ErrInjected)
	case Refuse:
		p.note(call, "refused")
		return false
	case LieKept:
		p.note(call, "kept, said true")
		return true
	case LieRemoved:
		p.note(call, fmt.Sprintf("removed %v, said false", p.next().Unregister(c)))
		return false
	}
	ok := p.next().Unregister(c)
	p.note(call, fmt.Sprint(ok))
	switch f {
	case BlockAfter:
		p.hold(call)
	case PanicAfter:
		panic(ErrInjected)
	}
	return ok
}

// hold announces call on Entered, then waits until Release.
func (p *Parent) hold(call Call) {
	p.Entered <- call
	<-p.release
}
