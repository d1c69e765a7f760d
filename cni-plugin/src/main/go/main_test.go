package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What the Java tests cannot reach through a process: a stdin that fails, and a failure kipam did
// not foresee; and, as it is what keeps a root process to its own socket, the confinement of
// ipam.socket. The rest of kipam's behaviour is tested by running the built binary from the Java
// tests (NativeKipamTest), against the same cases as the Java executable.

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("input/output error") }

type panickingReader struct{}

func (panickingReader) Read([]byte) (int, error) { panic("stack exhausted") }

func TestUnreadableStdinIsAnIOFailure(t *testing.T) {
	var out bytes.Buffer
	if code := run(map[string]string{"CNI_COMMAND": "ADD"}, failingReader{}, &out, "/nowhere.sock"); code != 1 {
		t.Fatalf("exit %d", code)
	}
	want := `{"cniVersion":"1.1.0","code":5,"msg":"cannot read the network configuration","details":"input/output error"}`
	if out.String() != want {
		t.Fatalf("got %s", out.String())
	}
}

func TestUnexpectedFailureIsAnInternalErrorOnStdout(t *testing.T) {
	var out bytes.Buffer
	if code := run(map[string]string{"CNI_COMMAND": "ADD"}, panickingReader{}, &out, "/nowhere.sock"); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if !strings.HasPrefix(out.String(), `{"cniVersion":"1.1.0","code":999,"msg":"kipam failed unexpectedly: stack exhausted"`) {
		t.Fatalf("got %s", out.String())
	}
}

func TestQuoteEscapesAsTheJavaExecutableDoes(t *testing.T) {
	if got := quote("a\"b\\c\n\x01<é>"); got != `"a\"b\\c\n\u0001<é>"` {
		t.Fatalf("got %s", got)
	}
}

func TestASocketOutsideTheInstallersDirectoryIsRefusedWithoutAConnect(t *testing.T) {
	dir := shortTempDir(t)
	run := filepath.Join(dir, "run")
	outside := filepath.Join(dir, "outside")
	listened := filepath.Join(outside, "x.sock")
	for _, d := range []string{run, outside, filepath.Join(dir, "runx")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"escape": outside, "link.sock": listened,
		"dangling.sock": filepath.Join(outside, "none.sock")}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(run, name)); err != nil {
			t.Fatal(err)
		}
	}
	recording, err := net.Listen("unix", listened)
	if err != nil {
		t.Fatal(err)
	}
	defer recording.Close()

	notInside := " is not a path inside " + run
	throughALink := " leads outside " + run + " through a symbolic link"
	problems := []struct{ socket, problem string }{
		{listened, notInside},
		{"/tmp/x.sock", notInside},
		{run + "/../outside/x.sock", notInside},
		{run + "//..//outside/./x.sock", notInside},
		{dir + "/runx/x.sock", notInside},
		{run, notInside},
		{run + "/", notInside},
		{run + "/.", notInside},
		{run + "/escape/x.sock", throughALink},
		{run + "/link.sock", throughALink},
		{run + "/dangling.sock", throughALink},
	}
	for _, p := range problems {
		var out bytes.Buffer
		config := `{"cniVersion":"1.0.0","ipam":{"type":"kipam","socket":` + quote(p.socket) + `}}`
		code := call(t, config, &out, filepath.Join(run, "kipam.sock"))
		want := `{"cniVersion":"1.0.0","code":7,"msg":` +
			quote("ipam.socket "+quoteValue(p.socket)+p.problem) + `,"details":` +
			quote("kipam connects only to a socket in "+run+", the directory its installer "+
				"configured; leave ipam.socket out for the default socket") + `}`
		if code != 1 || out.String() != want {
			t.Errorf("%s: exit %d, got %s, want %s", p.socket, code, out.String(), want)
		}
	}
	// A connect completes in the listening socket's backlog, even one nobody accepts.
	// (A deadline already past would fail the accept before looking at the backlog.)
	recording.(*net.UnixListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
	if conn, err := recording.Accept(); err == nil {
		conn.Close()
		t.Fatal("kipam connected to the socket outside its directory")
	}
}

func TestTheBuiltInSocketsDirectoryIsRunKipam(t *testing.T) {
	var out bytes.Buffer
	code := call(t, `{"ipam":{"socket":"/tmp/x.sock"}}`, &out, builtInSocket)
	want := `{"cniVersion":"1.1.0","code":7,"msg":"ipam.socket '/tmp/x.sock' is not a path inside ` +
		`/run/kipam","details":"kipam connects only to a socket in /run/kipam, the directory its ` +
		`installer configured; leave ipam.socket out for the default socket"}`
	if code != 1 || out.String() != want {
		t.Fatalf("exit %d, got %s", code, out.String())
	}
}

func TestASocketInTheDirectoryIsConnectedToByItsCleanedPath(t *testing.T) {
	run := shortTempDir(t)
	other := filepath.Join(run, "other.sock")
	for _, named := range []string{other, run + "//other.sock", run + "/./other.sock",
		run + "/absent/../other.sock"} {
		got, err := confine(named, socketDir(filepath.Join(run, "kipam.sock")))
		if err != nil || got != other {
			t.Errorf("%s: got %q, %v", named, got, err)
		}
	}
}

func call(t *testing.T, config string, out *bytes.Buffer, installed string) int {
	t.Helper()
	env := map[string]string{"CNI_COMMAND": "ADD", "KIPAM_TIMEOUT_SECONDS": "1"}
	return run(env, strings.NewReader(config), out, installed)
}

// shortTempDir is a temporary directory with a short name (t.TempDir holds the test's), so that the
// sockets in it fit a unix socket path.
func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "kipam")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
