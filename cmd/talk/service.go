package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// serviceName is the unit (systemd) and label (launchd) talk installs.
const (
	serviceUnit  = "talkd.service"
	serviceLabel = "io.github.talkd"
)

func serviceCommand() command {
	return command{
		name: "service", usage: "service install|uninstall|status [--talkd PATH] [--no-start]",
		summary: "run talkd at login: a systemd user unit (Linux), a launchd agent (macOS)",
		detail: `install writes the service definition for the talkd binary next to talk (or --talkd
PATH, else the first talkd on the PATH that is not Debian's netkit one) and enables and
starts it: on Linux ~/.config/systemd/user/talkd.service with systemctl --user enable
--now; on macOS ~/Library/LaunchAgents/io.github.talkd.plist with launchctl bootstrap.
--no-start only writes the file. uninstall stops the service and removes the file;
status shows both. On Windows, talk prints the equivalent Scheduled Task command and
changes nothing. Logs: journalctl --user -u talkd (Linux), ~/Library/Logs/talkd.log
(macOS).`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var bin string
			var noStart bool
			fs.StringVar(&bin, "talkd", "", "the talkd binary the service runs (`PATH`; default: next to talk)")
			fs.BoolVar(&noStart, "no-start", false, "install: write the service file only, do not enable or start it")
			return func(ctx context.Context, args []string) int {
				cmd, _ := findCommand("service")
				if len(args) != 1 {
					return a.usage(cmd, "give one of install, uninstall, status")
				}
				s := service{a: a, goos: runtime.GOOS, noStart: noStart}
				switch args[0] {
				case "install":
					path, err := s.talkdPath(bin)
					if err != nil {
						a.warnf("%v", err)
						return exitFailure
					}
					return s.install(ctx, path)
				case "uninstall":
					return s.uninstall(ctx)
				case "status":
					return s.status(ctx)
				}
				return a.usage(cmd, "unknown action %q: give install, uninstall or status", args[0])
			}
		},
	}
}

// service installs talkd as a per-user service of the platform's service manager.
type service struct {
	a       *app
	goos    string
	noStart bool
}

// talkdPath finds the daemon binary: --talkd, else beside this talk, else on the PATH,
// never Debian's unrelated netkit talkd.
func (s service) talkdPath(flagPath string) (string, error) {
	if flagPath != "" {
		abs, err := filepath.Abs(flagPath)
		if err != nil {
			return "", fmt.Errorf("--talkd %s: %w", flagPath, err)
		}
		if st, err := os.Stat(abs); err != nil || st.IsDir() {
			return "", fmt.Errorf("--talkd %s: not a file", flagPath)
		}
		return abs, nil
	}
	name := "talkd"
	if s.goos == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), name); isFile(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil && !strings.HasPrefix(p, "/usr/sbin/") {
		return filepath.Abs(p)
	}
	return "", errors.New("talkd was not found next to talk nor on the PATH (Debian's /usr/sbin/talkd is another program); pass --talkd PATH")
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// file is where the service definition lives for this user.
func (s service) file() (string, error) {
	switch s.goos {
	case "linux":
		dir := s.a.getenv("XDG_CONFIG_HOME")
		if dir == "" {
			home := s.a.getenv("HOME")
			if home == "" {
				return "", errors.New("neither XDG_CONFIG_HOME nor HOME is set")
			}
			dir = filepath.Join(home, ".config")
		}
		return filepath.Join(dir, "systemd", "user", serviceUnit), nil
	case "darwin":
		home := s.a.getenv("HOME")
		if home == "" {
			return "", errors.New("HOME is not set")
		}
		return filepath.Join(home, "Library", "LaunchAgents", serviceLabel+".plist"), nil
	}
	return "", fmt.Errorf("talk service does not manage services on %s", s.goos)
}

// systemdUnit is the user unit running talkd; Restart=on-failure brings it back after a
// crash, but not after a clean stop, and `systemctl --user reload talkd` sends the SIGHUP
// that makes talkd read its configuration again.
func systemdUnit(talkd string) string {
	return `[Unit]
Description=talkd: the voice (and plan keeper) of your agents
After=default.target

[Service]
ExecStart=` + systemdQuote(talkd) + `
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=2

[Install]
WantedBy=default.target
`
}

// systemdQuote quotes a path for ExecStart when it holds spaces or quotes, and doubles
// every % (systemd expands %-specifiers in ExecStart, so a path with "%h" would name
// another file).
func systemdQuote(p string) string {
	p = strings.ReplaceAll(p, "%", "%%")
	if !strings.ContainsAny(p, " \t\"'\\") {
		return p
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(p) + `"`
}

// launchdPlist is the launch agent running talkd at login, kept alive after a crash.
func launchdPlist(talkd, home string) string {
	esc := func(s string) string {
		return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	}
	log := filepath.Join(home, "Library", "Logs", "talkd.log")
	return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>` + serviceLabel + `</string>
  <key>ProgramArguments</key><array><string>` + esc(talkd) + `</string></array>
  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
  <key>StandardErrorPath</key><string>` + esc(log) + `</string>
</dict>
</plist>
`
}

// windowsTask is what a Windows user runs instead: a Scheduled Task at logon.
func windowsTask(talkd string) string {
	return `schtasks /Create /TN talkd /SC ONLOGON /RL LIMITED /TR "\"` + talkd + `\""`
}

func (s service) install(ctx context.Context, talkd string) int {
	if s.goos == "windows" {
		fmt.Fprintf(s.a.stdout, "talk service does not change Windows services; to start talkd at logon run:\n  %s\nand to remove it: schtasks /Delete /TN talkd /F\n", windowsTask(talkd))
		return exitOK
	}
	path, err := s.file()
	if err != nil {
		s.a.warnf("%v", err)
		return exitFailure
	}
	content := systemdUnit(talkd)
	if s.goos == "darwin" {
		content = launchdPlist(talkd, s.a.getenv("HOME"))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.a.warnf("create %s: %v", filepath.Dir(path), err)
		return exitFailure
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		s.a.warnf("write %s: %v", tmp, err)
		return exitFailure
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		s.a.warnf("write %s: %v", path, err)
		return exitFailure
	}
	fmt.Fprintf(s.a.stdout, "wrote %s (runs %s)\n", path, talkd)
	if s.noStart {
		return exitOK
	}
	var steps [][]string
	switch s.goos {
	case "linux":
		steps = [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", serviceUnit}}
	case "darwin":
		steps = [][]string{{"launchctl", "bootstrap", "gui/" + strconv.Itoa(os.Getuid()), path}}
	}
	if code := s.run(ctx, steps); code != exitOK {
		return code
	}
	fmt.Fprintln(s.a.stdout, "talkd is enabled and started; talk status shows it")
	return exitOK
}

func (s service) uninstall(ctx context.Context) int {
	if s.goos == "windows" {
		fmt.Fprintln(s.a.stdout, "talk service does not change Windows services; to remove the logon task run:\n  schtasks /Delete /TN talkd /F")
		return exitOK
	}
	path, err := s.file()
	if err != nil {
		s.a.warnf("%v", err)
		return exitFailure
	}
	if !isFile(path) {
		fmt.Fprintf(s.a.stdout, "not installed (%s does not exist)\n", path)
		return exitOK
	}
	var steps [][]string
	switch s.goos {
	case "linux":
		steps = [][]string{{"systemctl", "--user", "disable", "--now", serviceUnit}}
	case "darwin":
		steps = [][]string{{"launchctl", "bootout", "gui/" + strconv.Itoa(os.Getuid()) + "/" + serviceLabel}}
	}
	code := s.run(ctx, steps)
	if err := os.Remove(path); err != nil {
		s.a.warnf("remove %s: %v", path, err)
		return exitFailure
	}
	if s.goos == "linux" {
		s.run(ctx, [][]string{{"systemctl", "--user", "daemon-reload"}})
	}
	fmt.Fprintf(s.a.stdout, "removed %s\n", path)
	return code
}

func (s service) status(ctx context.Context) int {
	if s.goos == "windows" {
		fmt.Fprintln(s.a.stdout, "talk service does not manage Windows services; see: schtasks /Query /TN talkd")
		return exitOK
	}
	path, err := s.file()
	if err != nil {
		s.a.warnf("%v", err)
		return exitFailure
	}
	if !isFile(path) {
		fmt.Fprintf(s.a.stdout, "not installed (%s does not exist); install with: talk service install\n", path)
		return exitOK
	}
	fmt.Fprintf(s.a.stdout, "installed: %s\n", path)
	var argv []string
	switch s.goos {
	case "linux":
		argv = []string{"systemctl", "--user", "is-active", serviceUnit}
	case "darwin":
		argv = []string{"launchctl", "print", "gui/" + strconv.Itoa(os.Getuid()) + "/" + serviceLabel}
	}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	state := strings.TrimSpace(string(out))
	if s.goos == "darwin" {
		state = "loaded"
		if err != nil {
			state = "not loaded"
		}
	}
	if state == "" && err != nil {
		state = err.Error()
	}
	fmt.Fprintf(s.a.stdout, "state: %s\n", state)
	return exitOK
}

// run runs the service manager's commands in order, stopping at the first failure with
// its output, so a user sees what the manager said.
func (s service) run(ctx context.Context, steps [][]string) int {
	for _, argv := range steps {
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			s.a.warnf("%s: %v\n  %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
			return exitFailure
		}
	}
	return exitOK
}
