// Command scripted is the trial program of the process executor's tests.
//
//	scripted func|class   follow the executortest.Script in $HONE_TEST_SCRIPT
//	                      with trial.Main or trial.MainClass
//	scripted raw          speak the protocol by hand, line by line, as
//	                      $HONE_TEST_LINES (a JSON array of strings) says
//
// In raw mode each entry is sent as a line after replacing {token},
// {trial_id}, {staging} and {trial_dir} by the values from the
// environment, except for
// these commands:
//
//	<read>        read a line from hone and print it to stdout as "GOT <line>"
//	<big>         send a line of wire.MaxMessageSize+10 bytes
//	<ignoreterm>  ignore SIGTERM from now on
//	<sleep>       sleep until killed
//	<mkdir DIR>   create DIR (after the replacements)
//	<exit N>      exit with status N
//	<reconnect>   close the connection and connect again
//
// At the end of the list it exits with status 0.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hone-tune/hone/executor/executortest"
	"github.com/hone-tune/hone/trial"
	"github.com/hone-tune/hone/wire"
)

func main() {
	if len(os.Args) != 2 {
		fail("usage: scripted func|class|raw")
	}
	switch os.Args[1] {
	case "func":
		trial.Main(executortest.Func(script()))
	case "class":
		trial.MainClass(executortest.Class(script()))
	case "raw":
		raw()
	default:
		fail("unknown mode " + os.Args[1])
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "scripted:", msg)
	os.Exit(100)
}

func script() executortest.Script {
	var s executortest.Script
	if err := json.Unmarshal([]byte(os.Getenv("HONE_TEST_SCRIPT")), &s); err != nil {
		fail("HONE_TEST_SCRIPT: " + err.Error())
	}
	return s
}

func raw() {
	var lines []string
	if err := json.Unmarshal([]byte(os.Getenv("HONE_TEST_LINES")), &lines); err != nil {
		fail("HONE_TEST_LINES: " + err.Error())
	}
	conn, err := wire.Dial(os.Getenv(wire.EnvSocket))
	if err != nil {
		fail(err.Error())
	}
	r := bufio.NewReader(conn)
	read := func() {
		if line, err := r.ReadString('\n'); err == nil {
			fmt.Print("GOT ", line)
		}
	}
	repl := strings.NewReplacer(
		"{token}", os.Getenv(wire.EnvToken),
		"{trial_id}", os.Getenv(wire.EnvTrialID),
		"{staging}", os.Getenv(wire.EnvStagingDir),
		"{trial_dir}", os.Getenv(wire.EnvTrialDir),
	)
	for _, l := range lines {
		l = repl.Replace(l)
		switch {
		case l == "<read>":
			read()
			continue
		case l == "<big>":
			l = strings.Repeat("x", wire.MaxMessageSize+10)
		case l == "<ignoreterm>":
			signal.Ignore(syscall.SIGTERM)
			continue
		case l == "<reconnect>":
			conn.Close()
			if conn, err = wire.Dial(os.Getenv(wire.EnvSocket)); err != nil {
				fail(err.Error())
			}
			r = bufio.NewReader(conn)
			continue
		case l == "<sleep>":
			time.Sleep(time.Hour)
			continue
		case strings.HasPrefix(l, "<mkdir "):
			if err := os.MkdirAll(strings.TrimSuffix(strings.TrimPrefix(l, "<mkdir "), ">"), 0o755); err != nil {
				fail(err.Error())
			}
			continue
		case strings.HasPrefix(l, "<exit "):
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(l, "<exit "), ">"))
			os.Exit(n)
		}
		if _, err := conn.Write([]byte(l + "\n")); err != nil {
			fmt.Println("WRITE", err)
		}
	}
}
