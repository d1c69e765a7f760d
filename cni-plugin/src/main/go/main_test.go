package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// What the Java tests cannot reach through a process: a stdin that fails, and a failure kipam did
// not foresee. The rest of kipam's behaviour is tested by running the built binary from the Java
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
