package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cdpBrowser is a headless Chromium driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on its fd 3, answers and events on its fd 4, each
// message JSON ended by a NUL byte). The tests need it where --dump-dom cannot reach:
// granting a permission the browser would otherwise ask a person for.
type cdpBrowser struct {
	cmd *exec.Cmd
	in  io.WriteCloser

	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpAnswer
	stderr  bytes.Buffer
}

type cdpAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// startCDP starts Chromium with flags; it is killed (its whole process group) at cleanup.
func startCDP(t *testing.T, chromium string, flags ...string) *cdpBrowser {
	t.Helper()
	dir := t.TempDir()
	toChrome, chromeIn, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	chromeOut, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--remote-debugging-pipe", "--user-data-dir=" + filepath.Join(dir, "profile")}, flags...)
	cmd := exec.Command(chromium, append(args, "about:blank")...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome} // fd 3 and 4 in Chromium
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b := &cdpBrowser{cmd: cmd, in: chromeIn, waiting: map[int]chan cdpAnswer{}}
	cmd.Stderr = &lockedWriter{w: &b.stderr, mu: &b.mu}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	toChrome.Close()
	fromChrome.Close()
	t.Cleanup(func() {
		chromeIn.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		chromeOut.Close()
	})
	go b.read(chromeOut)
	return b
}

// lockedWriter serialises Chromium's stderr with the reader of the pipe.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// read delivers the answers to their callers; events are dropped.
func (b *cdpBrowser) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, 0); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		var msg struct {
			ID int `json:"id"`
			cdpAnswer
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == 0 {
			continue
		}
		b.mu.Lock()
		ch := b.waiting[msg.ID]
		delete(b.waiting, msg.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- msg.cdpAnswer
		}
	}
}

// call sends one command (to the browser, or to a page's session) and waits for its answer.
func (b *cdpBrowser) call(ctx context.Context, session, method string, params any, result any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpAnswer, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(raw, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case a := <-ch:
		if a.Error != nil {
			return fmt.Errorf("%s: %s", method, a.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(a.Result, result)
		}
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		return fmt.Errorf("%s: no answer: %w; stderr:\n%s", method, ctx.Err(), browserTail(b.stderr.String()))
	}
}

// open opens url in a new page and returns the page's session.
func (b *cdpBrowser) open(ctx context.Context, url string) (string, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": url}, &target); err != nil {
		return "", err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	return attached.SessionID, err
}

// evaluate runs expression in the page and returns its value as JSON.
func (b *cdpBrowser) evaluate(ctx context.Context, session, expression string) (json.RawMessage, error) {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	err := b.call(ctx, session, "Runtime.evaluate", map[string]any{"expression": expression, "returnByValue": true}, &res)
	return res.Result.Value, err
}

// waitDone polls the page until its title is "done" and returns #result's text.
func (b *cdpBrowser) waitDone(ctx context.Context, session string) (string, error) {
	for {
		v, err := b.evaluate(ctx, session, `document.title === "done" ? document.getElementById("result").textContent : null`)
		if err != nil {
			return "", err
		}
		var s *string
		if json.Unmarshal(v, &s) == nil && s != nil {
			return *s, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the page did not finish: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
