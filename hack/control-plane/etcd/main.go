// Command etcd is etcd's own server entry point, built from the release that the pinned
// Kubernetes version requires, so the test control plane runs the etcd it was tested with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
