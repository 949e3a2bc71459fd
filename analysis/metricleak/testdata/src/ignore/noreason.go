package ignore

/* want `^this //lint:file-ignore directive has no reason, so it is not honoured: write //lint:file-ignore metricleak followed by why$` */ //lint:file-ignore metricleak

import "github.com/prometheus/client_golang/prometheus"

func fileNotIgnored(reg prometheus.Registerer, start func() error) error {
	reg.MustRegister(gauge())
	return start() // want `^up registered at noreason\.go:\d+ stays registered`
}
