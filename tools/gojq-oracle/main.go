// Command gojq-oracle evaluates jq expressions with gojq exactly as
// upstream Workload Map does (pkg/jq's runner), so that tests can hold our
// engines to upstream's semantics.
//
// It reads requests from stdin, one JSON value each (one a line):
//
//	{"expr": "<jq source>", "input": <any JSON>}
//
// and writes one JSON line per request, in order:
//
//	{"outputs": [<output>, ...]}
//	{"stage": "parse"|"compile"|"run", "error": "<gojq's error text>"}
//
// As upstream: the input is decoded as encoding/json does (every number a
// float64), the expression goes through gojq.Parse and gojq.Compile, and
// the run ends with an error at its max-results-th output or when its
// timeout passes. Outputs are serialized with gojq.Marshal, so numbers read
// as gojq prints them (tojson's text). A request that is not valid JSON
// ends the program (exit status 2): the stream cannot be resynchronized.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/itchyny/gojq"
)

type request struct {
	Expr  string          `json:"expr"`
	Input json.RawMessage `json:"input"`
}

type failure struct {
	Stage string `json:"stage"`
	Error string `json:"error"`
}

func main() {
	// Upstream's defaults: defaultMaxResults and defaultTimeoutInMilliseconds.
	maxResults := flag.Int("max-results", 1000, "the output count at which a run fails (upstream: 1000)")
	timeout := flag.Duration("timeout", 10*time.Second, "time allowed to one run (upstream: 10s)")
	flag.Parse()

	decoder := json.NewDecoder(bufio.NewReader(os.Stdin))
	out := bufio.NewWriter(os.Stdout)
	for {
		var req request
		if err := decoder.Decode(&req); err == io.EOF {
			return
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "gojq-oracle: bad request: %v\n", err)
			os.Exit(2)
		}
		out.Write(evaluate(req, *maxResults, *timeout))
		out.WriteByte('\n')
		if err := out.Flush(); err != nil {
			fmt.Fprintf(os.Stderr, "gojq-oracle: %v\n", err)
			os.Exit(1)
		}
	}
}

// evaluate returns the response line (without its newline) for req.
func evaluate(req request, maxResults int, timeout time.Duration) []byte {
	var input any
	if len(req.Input) > 0 {
		if err := json.Unmarshal(req.Input, &input); err != nil {
			return encodeFailure("input", err)
		}
	}
	query, err := gojq.Parse(req.Expr)
	if err != nil {
		return encodeFailure("parse", err)
	}
	code, err := gojq.Compile(query)
	if err != nil {
		return encodeFailure("compile", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	iter := code.RunWithContext(ctx, input)
	response := []byte(`{"outputs":[`)
	for count := 0; ; {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := v.(error); ok {
			return encodeFailure("run", err)
		}
		text, err := gojq.Marshal(v)
		if err != nil {
			return encodeFailure("run", err)
		}
		if count > 0 {
			response = append(response, ',')
		}
		response = append(response, text...)
		if count++; count >= maxResults {
			return encodeFailure("run", fmt.Errorf("query results exceed the allowed number %d", maxResults))
		}
	}
	return append(response, "]}"...)
}

func encodeFailure(stage string, err error) []byte {
	text, _ := json.Marshal(failure{Stage: stage, Error: err.Error()})
	return text
}
