package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"
)

// errTimeout: the exchange with the daemon did not end within its deadline.
var errTimeout = errors.New("no complete answer within the deadline")

type response struct {
	status int
	header map[string]string // lower-case names
	body   []byte
}

// post sends one HTTP/1.1 POST of body to path over the unix socket and reads the whole answer, all
// within timeout seconds: connect, send and read share one deadline. The request closes the
// connection; chunked bodies are decoded and a Content-Length is honoured by net/http's reader.
func post(socket, path string, body []byte, timeout int64) (*response, error) {
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	answer, err := exchange(socket, path, body, deadline)
	if err != nil && (errors.Is(err, os.ErrDeadlineExceeded) || !time.Now().Before(deadline)) {
		return nil, errTimeout
	}
	return answer, err
}

// dial connects to the socket by the deadline. A full accept queue (a burst of calls the daemon has
// not accepted yet) makes connect fail at once with EAGAIN on a unix socket, where TCP would wait;
// that is retried, as the Java executable's blocking connect waits, until the deadline.
func dial(socket string, deadline time.Time) (net.Conn, error) {
	pause := time.Millisecond
	for {
		dialer := net.Dialer{Deadline: deadline}
		conn, err := dialer.Dial("unix", socket)
		if err == nil || !errors.Is(err, syscall.EAGAIN) || !time.Now().Add(pause).Before(deadline) {
			return conn, err
		}
		time.Sleep(pause)
		if pause < 50*time.Millisecond {
			pause *= 2
		}
	}
}

func exchange(socket, path string, body []byte, deadline time.Time) (*response, error) {
	conn, err := dial(socket, deadline)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: kipam-node\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nConnection: close\r\n\r\n", path, len(body))
	if _, err := conn.Write(append([]byte(head), body...)); err != nil {
		return nil, err
	}
	all, err := io.ReadAll(conn)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(all, []byte("\r\n\r\n")) {
		return nil, errors.New("the daemon closed the connection before a complete HTTP answer")
	}
	answer, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(all)), nil)
	if err != nil {
		return nil, fmt.Errorf("the daemon's answer is not HTTP/1.1: %v", err)
	}
	defer answer.Body.Close()
	content, err := io.ReadAll(answer.Body)
	if err != nil {
		return nil, fmt.Errorf("the daemon's answer is incomplete: %v", err)
	}
	header := map[string]string{}
	for name, values := range answer.Header {
		header[strings.ToLower(name)] = values[0]
	}
	return &response{status: answer.StatusCode, header: header, body: content}, nil
}
