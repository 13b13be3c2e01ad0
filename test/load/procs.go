package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// proc is one server process started by the generator.
type proc struct {
	Name string
	Addr string
	cmd  *exec.Cmd
	home string // removed on stop ("" = nothing to remove)
	done chan struct{}
	log  string // where its output goes
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) target(healthz bool) target {
	return target{Name: p.Name, URL: "http://" + p.Addr, PID: p.pid(), Healthz: healthz}
}

// stop ends the process with SIGTERM (SIGKILL after 15 s) and removes its home.
func (p *proc) stop() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	if p.home != "" {
		os.RemoveAll(p.home)
	}
}

// binaries are the servers' executables.
type binaries struct{ talkd, gosdk, mcpgo, floor string }

// buildBinaries builds talkd and the three peers from the module at root into dir.
func buildBinaries(ctx context.Context, root, dir string) (binaries, error) {
	pkgs := []string{"./cmd/talkd", "./test/peers/gosdk", "./test/peers/mcpgo", "./test/peers/floor"}
	args := append([]string{"build", "-o", dir + string(os.PathSeparator)}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return binaries{}, fmt.Errorf("go build: %w\n%s", err, out)
	}
	return binaries{filepath.Join(dir, "talkd"), filepath.Join(dir, "gosdk"), filepath.Join(dir, "mcpgo"), filepath.Join(dir, "floor")}, nil
}

// moduleRoot walks up from the working directory to the go.mod of module talkd.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module talkd\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of module talkd above the working directory (use -talkd, -gosdk, -mcpgo, -floor and -plan)")
		}
		dir = parent
	}
}

// talkdSetup describes one talkd process: its config file (empty = embedded defaults)
// and whether the example plan is copied into its home and configured as "werkbaum".
type talkdSetup struct {
	Name   string
	Config string // TOML without [[plans]]; "" = no config file unless a plan is added
	Plan   bool
	Mute   bool // POST /mute after start (every announcement is answered "muted")
	Listen string
	Env    []string // added to the environment (experiments such as GOGC=50)
	CPUs   string   // taskset CPU list the server is confined to ("" = not pinned)
}

const admissionConfig = `version = 1
[voice]
fake_duration = "1ms"
[rules]
queue_size = 10000
[rules.rate_limit]
low = "0s"
normal = "0s"
high = "0s"
`

// talkdEnv is an isolated environment living in home: fake voice, null sink.
func talkdEnv(home, listen string) []string {
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"TALK_LISTEN=" + listen,
		"TALK_PROVIDER=fake",
		"TALK_SINK=null",
		"PATH=" + os.Getenv("PATH"),
	}
}

// prepareTalkd creates a fresh home for setup and returns the command to start.
func prepareTalkd(bin, planSrc string, s talkdSetup) (*exec.Cmd, string, error) {
	home, err := os.MkdirTemp("", "talkd-load-")
	if err != nil {
		return nil, "", fmt.Errorf("temp home: %w", err)
	}
	cfg := s.Config
	if s.Plan {
		src, err := os.ReadFile(planSrc)
		if err != nil {
			os.RemoveAll(home)
			return nil, "", fmt.Errorf("read example plan: %w", err)
		}
		planPath := filepath.Join(home, "plans", "werkbaum.werkbaum")
		if err := os.MkdirAll(filepath.Dir(planPath), 0o700); err != nil {
			os.RemoveAll(home)
			return nil, "", fmt.Errorf("plan dir: %w", err)
		}
		if err := os.WriteFile(planPath, src, 0o600); err != nil {
			os.RemoveAll(home)
			return nil, "", fmt.Errorf("copy plan: %w", err)
		}
		if cfg == "" {
			cfg = "version = 1\n"
		}
		cfg += fmt.Sprintf("\n[[plans]]\nkey = \"werkbaum\"\npath = %q\nlang = \"en\"\n", planPath)
	}
	if cfg != "" {
		dir := filepath.Join(home, ".config", "talk")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			os.RemoveAll(home)
			return nil, "", fmt.Errorf("config dir: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o600); err != nil {
			os.RemoveAll(home)
			return nil, "", fmt.Errorf("write config: %w", err)
		}
	}
	listen := s.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	cmd := serverCommand(s.CPUs, bin)
	cmd.Env = append(talkdEnv(home, listen), s.Env...)
	return cmd, home, nil
}

var listeningRe = regexp.MustCompile(`listening addr=(\S+)`)

// startTalkd starts talkd with setup and waits until it logs its listen address.
func startTalkd(ctx context.Context, bin, planSrc string, s talkdSetup) (*proc, error) {
	cmd, home, err := prepareTalkd(bin, planSrc, s)
	if err != nil {
		return nil, err
	}
	p := &proc{Name: "talkd", cmd: cmd, home: home, done: make(chan struct{}), log: filepath.Join(home, "talkd.log")}
	if err := p.startLogged(ctx); err != nil {
		os.RemoveAll(home)
		return nil, err
	}
	if s.Mute {
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Post("http://"+p.Addr+"/mute", "application/json", nil)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
		}
		if err != nil {
			p.stop()
			return nil, fmt.Errorf("mute talkd: %w", err)
		}
	}
	return p, nil
}

// serverCommand runs bin, confined to the CPUs in list (taskset -c) when list is set.
// taskset execs bin, so the process id is the server's own.
func serverCommand(cpus, bin string, args ...string) *exec.Cmd {
	if cpus == "" {
		return exec.Command(bin, args...)
	}
	return exec.Command("taskset", append([]string{"-c", cpus, bin}, args...)...)
}

// startPeer starts a peer server binary on 127.0.0.1:0 (on cpus, when set).
func startPeer(ctx context.Context, name, bin, cpus string) (*proc, error) {
	return startPeerArgs(ctx, name, bin, cpus)
}

// startPeerArgs is startPeer with more arguments for the peer.
func startPeerArgs(ctx context.Context, name, bin, cpus string, args ...string) (*proc, error) {
	dir, err := os.MkdirTemp("", "talkd-load-peer-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	p := &proc{Name: name, cmd: serverCommand(cpus, bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...), home: dir,
		done: make(chan struct{}), log: filepath.Join(dir, name+".log")}
	if err := p.startLogged(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

// startLogged starts p with its output in p.log and waits for "listening addr=".
func (p *proc) startLogged(ctx context.Context) error {
	f, err := os.Create(p.log)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if addr := scanListening(p.log); addr != "" {
			p.Addr = addr
			return nil
		}
		select {
		case <-p.done:
			b, _ := os.ReadFile(p.log)
			return fmt.Errorf("%s exited before listening:\n%s", p.Name, b)
		case <-ctx.Done():
			p.stop()
			return fmt.Errorf("%s: %w", p.Name, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return fmt.Errorf("%s did not listen within 20 s", p.Name)
		}
	}
}

// scanListening finds the listen address in a log file written so far.
func scanListening(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
			return m[1]
		}
	}
	return ""
}

// freePort returns a loopback address that was free a moment ago.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, nil
}
