// Command pause waits until it is told to stop. It is the sandbox ("pause") image of the real-node
// tests and their workload image too: no registry is reachable there, so both are built from this
// static program by build.sh.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
