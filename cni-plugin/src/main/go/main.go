// Command kipam is the CNI IPAM executable a container runtime calls. It keeps no state and uses
// Go's standard library alone, so it is one static binary with nothing to install beside it: VERSION
// is answered here, every other command is forwarded with its CNI_* variables and configuration to
// kipam-node over the node's unix socket, and the daemon's answer is written to stdout with its exit
// code. A configuration may name another socket only in the directory of the installer's socket.
// It behaves exactly as the Java executable io.kipam.cni.shim.Kipam; the tests run the same
// cases against both.
//
// The whole exchange with the daemon (connect, send, read) must end within a deadline, 60 s unless
// KIPAM_TIMEOUT_SECONDS sets another whole number of seconds; a daemon that does not answer in time
// is error 11 (STATUS: 50). Whatever the input, kipam answers on stdout: an unexpected failure is
// error 999.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// version is stamped in by the build (-ldflags "-X main.version=...").
var version = "dev"

const (
	newestVersion   = "1.1.0"
	stdinLimit      = 1 << 20 // configurations are small; kipam-node refuses more than 1 MiB
	timeoutVariable = "KIPAM_TIMEOUT_SECONDS"
	defaultTimeout  = 60
	exitCodeHeader  = "Kipam-Exit-Code"

	invalidEnvironment   = 4
	ioFailure            = 5
	invalidNetworkConfig = 7
	tryAgainLater        = 11
	pluginNotAvailable   = 50
	internal             = 999
)

var supportedVersions = []string{"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}

// builtInSocket is the socket used when neither the configuration nor kipam.conf names one.
const builtInSocket = "/run/kipam/kipam.sock"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Printf("kipam %s\n", version)
		return
	}
	out := bufio.NewWriter(os.Stdout)
	code := run(environ(), os.Stdin, out, defaultSocket())
	out.Flush()
	os.Exit(code)
}

func environ() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// defaultSocket is what install-kipam.sh wrote as "socket=PATH" into kipam.conf next to the
// executable, or builtInSocket. A file rather than a flag, because the runtime execs kipam with no
// arguments of ours; read from the executable's own directory, because that is all kipam knows.
func defaultSocket() string {
	exe, err := os.Executable()
	if err != nil {
		return builtInSocket
	}
	conf, err := os.ReadFile(filepath.Join(filepath.Dir(exe), "kipam.conf"))
	if err != nil {
		return builtInSocket
	}
	for _, line := range strings.Split(string(conf), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "socket="); ok && v != "" {
			return v
		}
	}
	return builtInSocket
}

// run is one CNI call: the runtime's environment, stdin and stdout, and the installer's socket,
// for configurations that name none and as the directory any named socket must be in; it returns
// the exit code.
func run(env map[string]string, stdin io.Reader, stdout io.Writer, fallback string) (code int) {
	cniVersion := newestVersion
	defer func() {
		if r := recover(); r != nil { // the last resort: a CNI answer rather than a crash
			code = cniError(stdout, cniVersion, internal, fmt.Sprintf("kipam failed unexpectedly: %v", r),
				"a bug in the kipam executable; the call may be retried")
		}
	}()
	// One byte past the limit is read so the daemon can tell an oversize configuration apart.
	config, err := io.ReadAll(io.LimitReader(stdin, stdinLimit+1))
	if err != nil {
		return cniError(stdout, cniVersion, ioFailure, "cannot read the network configuration", err.Error())
	}
	json := parseObject(config)
	if v, ok := json["cniVersion"].(string); ok && supported(v) {
		cniVersion = v
	}
	if env["CNI_COMMAND"] == "VERSION" {
		io.WriteString(stdout, versionAnswer(cniVersion))
		return 0
	}
	timeout, err := timeoutSeconds(env)
	if err != nil {
		return cniError(stdout, cniVersion, invalidEnvironment, err.Error(),
			fmt.Sprintf("unset it for the default of %d s", defaultTimeout))
	}
	socket, err := resolveSocket(json, fallback)
	if err != nil {
		return cniError(stdout, cniVersion, invalidNetworkConfig, err.Error(), socketRule)
	}
	if socket != fallback { // the installer's own socket needs no checking
		dir := socketDir(fallback)
		if socket, err = confine(socket, dir); err != nil {
			return cniError(stdout, cniVersion, invalidNetworkConfig, err.Error(), confinedRule(dir))
		}
	}
	return forward(env, config, cniVersion, socket, timeout, stdout)
}

func supported(v string) bool {
	for _, s := range supportedVersions {
		if s == v {
			return true
		}
	}
	return false
}

// timeoutSeconds is the deadline of the exchange with the daemon, from KIPAM_TIMEOUT_SECONDS.
func timeoutSeconds(env map[string]string) (int64, error) {
	text, ok := env[timeoutVariable]
	if !ok {
		return defaultTimeout, nil
	}
	if seconds, err := strconv.ParseInt(text, 10, 64); err == nil && seconds >= 1 {
		return seconds, nil
	}
	return 0, fmt.Errorf("%s must be a whole number of seconds of at least 1, not %s",
		timeoutVariable, quote(text))
}

func forward(env map[string]string, config []byte, cniVersion, socket string, timeout int64,
	stdout io.Writer) int {
	status := env["CNI_COMMAND"] == "STATUS"
	answer, err := post(socket, "/v1/cni", envelope(env, config), timeout)
	switch {
	case err == errTimeout:
		// The daemon may still finish the call; ADD and DEL are idempotent, so a retry is safe.
		code := tryAgainLater
		if status {
			code = pluginNotAvailable
		}
		return cniError(stdout, cniVersion, code,
			fmt.Sprintf("kipam-node at %s did not answer within %d s", socket, timeout),
			"check that the kipam-node pod on this node is running and ready, and its log")
	case err != nil && status:
		return cniError(stdout, cniVersion, pluginNotAvailable,
			fmt.Sprintf("kipam-node at %s is not available", socket), err.Error())
	case err != nil:
		return cniError(stdout, cniVersion, tryAgainLater,
			fmt.Sprintf("cannot reach kipam-node at %s", socket),
			err.Error()+"; check that the kipam-node pod on this node is running and ready")
	}
	exit, hasExit := answer.header[strings.ToLower(exitCodeHeader)]
	if answer.status != 200 || !hasExit {
		return cniError(stdout, cniVersion, tryAgainLater,
			fmt.Sprintf("kipam-node at %s answered HTTP %d", socket, answer.status), string(answer.body))
	}
	code, err := strconv.Atoi(exit)
	if err != nil {
		return cniError(stdout, cniVersion, tryAgainLater,
			fmt.Sprintf("kipam-node at %s answered with exit code %s", socket, quote(exit)),
			string(answer.body))
	}
	stdout.Write(answer.body)
	return code
}

// envelope is the request body: the CNI_* variables only (nothing else of the environment), sorted
// by name, and stdin in base64.
func envelope(env map[string]string, config []byte) []byte {
	names := make([]string, 0, len(env))
	for k := range env {
		if strings.HasPrefix(k, "CNI_") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString(`{"env":{`)
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quote(k) + ":" + quote(env[k]))
	}
	b.WriteString(`},"stdin":"` + base64.StdEncoding.EncodeToString(config) + `"}`)
	return b.Bytes()
}

func versionAnswer(cniVersion string) string {
	quoted := make([]string, len(supportedVersions))
	for i, v := range supportedVersions {
		quoted[i] = quote(v)
	}
	return `{"cniVersion":` + quote(cniVersion) + `,"supportedVersions":[` + strings.Join(quoted, ",") + `]}`
}

func cniError(stdout io.Writer, cniVersion string, code int, msg, details string) int {
	fmt.Fprintf(stdout, `{"cniVersion":%s,"code":%d,"msg":%s,"details":%s}`,
		quote(cniVersion), code, quote(msg), quote(details))
	return 1
}
