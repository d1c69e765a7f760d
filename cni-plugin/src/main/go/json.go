package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
)

// maxDepth: far deeper than any network configuration. Deeper input is unreadable, as it is to the
// Java executable, so both send it to the default socket and answer VERSION in the newest version.
const maxDepth = 128

// parseObject is the top-level object of config, or an empty map if it is not a readable JSON
// object. kipam needs two values (cniVersion, ipam.socket) and leaves everything else, errors
// included, to kipam-node, which parses the same bytes and explains what is wrong.
func parseObject(config []byte) map[string]any {
	if tooDeep(config) {
		return map[string]any{}
	}
	var object map[string]any
	if err := json.Unmarshal(config, &object); err != nil || object == nil {
		return map[string]any{}
	}
	return object
}

// tooDeep tells whether objects and lists nest deeper than maxDepth, outside strings.
func tooDeep(text []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range text {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// quote is s as a JSON string literal, escaped as the Java executable escapes it (control
// characters only; no HTML escaping), with invalid UTF-8 replaced.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// maxSocketBytes: sun_path holds 108 bytes on Linux, the terminating NUL included.
const maxSocketBytes = 107

// socketRule is what a valid ipam.socket looks like, for the details of an error.
var socketRule = fmt.Sprintf("kipam connects to kipam-node through ipam.socket; name it by an "+
	"absolute path of at most %d bytes, or leave it out for the default socket", maxSocketBytes)

// resolveSocket is the socket named by ipam.socket, checked before anything connects, or fallback
// if none is named. A path that can never be a socket is a configuration error, reported in the
// words kipam-node uses for the same rules.
func resolveSocket(config map[string]any, fallback string) (string, error) {
	ipam, ok := config["ipam"].(map[string]any)
	if !ok || ipam["socket"] == nil {
		return fallback, nil
	}
	socket, ok := ipam["socket"].(string)
	if !ok {
		return "", fmt.Errorf("ipam.socket must be a string, not %s", typeOf(ipam["socket"]))
	}
	if !strings.HasPrefix(socket, "/") {
		return "", fmt.Errorf("ipam.socket %s must be an absolute path", quoteValue(socket))
	}
	if strings.ContainsRune(socket, 0) {
		return "", fmt.Errorf("ipam.socket must not contain a NUL character")
	}
	if len(socket) > maxSocketBytes {
		return "", fmt.Errorf("ipam.socket %s is longer than the %d bytes a unix socket path may have",
			quoteValue(socket), maxSocketBytes)
	}
	return socket, nil
}

func typeOf(value any) string {
	switch value.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// quoteValue quotes a value for a message as kipam-node does: in single quotes, control characters
// escaped, cut after 80 characters (counted in UTF-16 units, as Java counts them).
func quoteValue(value string) string {
	const maxQuoted = 80
	units := utf16.Encode([]rune(value))
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range utf16.Decode(units[:min(len(units), maxQuoted)]) {
		if r < 0x20 || r == 0x7f {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	if len(units) > maxQuoted {
		fmt.Fprintf(&b, "...(%d characters)", len(units))
	}
	b.WriteByte('\'')
	return b.String()
}
