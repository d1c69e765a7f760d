package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// kipam runs as root, so a socket named by a tenant's network configuration must not take it to a
// socket of someone else's choosing (one a pod made could answer with any address). It connects
// only inside the directory of the installer's socket, which only root can write to.

// socketDir is the directory kipam may connect in: the one holding the installer's socket.
func socketDir(installed string) string {
	if abs, err := filepath.Abs(installed); err == nil {
		installed = abs
	}
	return filepath.Dir(installed)
}

// confinedRule is the details of a refused ipam.socket.
func confinedRule(dir string) string {
	return fmt.Sprintf("kipam connects only to a socket in %s, the directory its installer "+
		"configured; leave ipam.socket out for the default socket", dir)
}

// confine is socket, lexically cleaned, if it lies inside dir; otherwise an error naming it. The
// cleaned path is what kipam connects to, so "..", "." and double slashes mean the same to the
// check and to the kernel. Symbolic links among the parts that exist are followed, and the path
// must still end inside dir; a link that cannot be followed counts as leaving it. Where the parent
// directory does not exist, the connect fails anyway.
func confine(socket, dir string) (string, error) {
	clean := filepath.Clean(socket)
	if !inside(clean, dir) {
		return "", fmt.Errorf("ipam.socket %s is not a path inside %s", quoteValue(socket), dir)
	}
	if leaves(clean, dir) {
		return "", fmt.Errorf("ipam.socket %s leads outside %s through a symbolic link",
			quoteValue(socket), dir)
	}
	return clean, nil
}

// inside tells whether the clean absolute path lies below dir (dir itself is not below it).
func inside(path, dir string) bool {
	prefix := dir
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return path != dir && strings.HasPrefix(path, prefix)
}

// leaves tells whether path, inside dir as written, ends outside it once symbolic links are followed.
func leaves(path, dir string) bool {
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false // no directory: nothing in it to connect to
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if _, err := os.Lstat(path); err == nil {
			return true // there, but not to be followed: a dangling link
		}
		parent, err := filepath.EvalSymlinks(filepath.Dir(path))
		if err != nil {
			return false
		}
		real = filepath.Join(parent, filepath.Base(path))
	}
	return !inside(real, realDir)
}
