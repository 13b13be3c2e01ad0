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
		name: "service", usage: "service install|uninstall|status",
		summary: "run talkd at login: a systemd user unit (Linux), a launchd agent (macOS)",
		detail: `install writes the service definition for the talkd binary next to talk (or --talkd
PATH, else the first talkd on the PATH that is not Debian's netkit one) and enables and
starts it: on Linux ~/.config/systemd/user/talkd.service with systemctl --user enable
--now; on macOS ~/Library/LaunchAgents/io.github.talkd.plist with launchctl bootstrap.
--no-start only writes the file. uninstall stops the service and removes the file;
status shows both. On Windows, talk prints the equivalent Scheduled Task command and
changes nothing. Logs: journalctl --user -u talkd (Linux), ~/Library/Logs/talkd.log
(macOS).
The unit reads its environment from ~/.config/talk/talkd.env (EnvironmentFile; install
writes it once, mode 0600, with your PATH so engines in ~/.local/bin are found): put the
tokens your config names with token_env there, as KEY=value lines.
Without a systemd user session (ssh logins, containers, WSL) systemctl --user cannot work:
install writes the unit, says so, exits 1 and names what works instead:
loginctl enable-linger, --autostart (an XDG autostart entry ~/.config/autostart/talkd.desktop,
started by a desktop session at login), or --print (the unit on stdout, to install it
elsewhere). status exits 1 when it cannot tell the service's state.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var bin string
			var noStart, autostart, print bool
			fs.StringVar(&bin, "talkd", "", "the talkd binary the service runs (`PATH`; default: next to talk)")
			fs.BoolVar(&noStart, "no-start", false, "install: write the service file only, do not enable or start it")
			fs.BoolVar(&autostart, "autostart", false, "install, uninstall (Linux): an XDG autostart entry instead of a systemd unit")
			fs.BoolVar(&print, "print", false, "install: print the service definition instead of installing it")
			return func(ctx context.Context, args []string) int {
				cmd, _ := findCommand("service")
				if len(args) != 1 {
					return a.usage(cmd, "give one of install, uninstall, status")
				}
				s := service{a: a, goos: runtime.GOOS, noStart: noStart, autostart: autostart}
				if (autostart || print) && args[0] == "status" || print && args[0] != "install" {
					return a.usage(cmd, "--autostart belongs to install and uninstall, --print to install")
				}
				switch args[0] {
				case "install":
					path, err := s.talkdPath(bin)
					if err != nil {
						a.warnf("%v", err)
						return exitFailure
					}
					if print {
						return s.print(path)
					}
					if autostart {
						return s.installAutostart(path)
					}
					return s.install(ctx, path)
				case "uninstall":
					if autostart {
						return s.uninstallAutostart()
					}
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
	a         *app
	goos      string
	noStart   bool
	autostart bool
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
		dir, err := s.configDir()
		if err != nil {
			return "", err
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

// configDir is the user's configuration folder: $XDG_CONFIG_HOME, else ~/.config.
func (s service) configDir() (string, error) {
	if dir := s.a.getenv("XDG_CONFIG_HOME"); dir != "" {
		return dir, nil
	}
	home := s.a.getenv("HOME")
	if home == "" {
		return "", errors.New("neither XDG_CONFIG_HOME nor HOME is set")
	}
	return filepath.Join(home, ".config"), nil
}

// envFile is the service's environment file: the tokens the config names with token_env
// and a PATH, which a service manager does not take from the user's shell.
func (s service) envFile() (string, error) {
	dir, err := s.configDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "talk", "talkd.env"), nil
}

// envFileContent is the first content of the environment file: the PATH of the shell that
// installed the service (an engine in ~/.local/bin is found), and where tokens go.
func envFileContent(path string) string {
	return `# The environment of the talkd service (written once by talk service install; yours to edit).
# KEY=value lines; systemd reads them at each start (systemctl --user restart talkd).
# The PATH talkd searches for engines and players (of the shell that ran the install):
PATH=` + path + `
# The tokens your talkd config names with token_env go here, e.g.:
# TALKD_TOKEN_CI=…
`
}

// systemdUnit is the user unit running talkd; Restart=on-failure brings it back after a
// crash, but not after a clean stop, and `systemctl --user reload talkd` sends the SIGHUP
// that makes talkd read its configuration again. The environment file is optional (-):
// the unit starts without it. It is a path, not a command line: no quoting, only the
// %-specifiers doubled.
func systemdUnit(talkd, envFile string) string {
	return `[Unit]
Description=talkd: the voice (and plan keeper) of your agents
After=default.target

[Service]
EnvironmentFile=-` + strings.ReplaceAll(envFile, "%", "%%") + `
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
	var content string
	switch s.goos {
	case "darwin":
		content = launchdPlist(talkd, s.a.getenv("HOME"))
	default:
		env, err := s.writeEnvFile()
		if err != nil {
			s.a.warnf("%v", err)
			return exitFailure
		}
		content = systemdUnit(talkd, env)
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
		if out, err := exec.CommandContext(ctx, "systemctl", "--user", "daemon-reload").CombinedOutput(); err != nil {
			if why, ok := noUserSession(out, err); ok {
				s.a.warnf("wrote the unit, but there is no systemd user session here (systemctl --user: %s), so talkd was not enabled or started. What works instead:\n"+
					"  - systemd without a login session (ssh, a server): sudo loginctl enable-linger %s, log in again, then: talk service install\n"+
					"  - a desktop session without systemd: talk service install --autostart (starts talkd at your next login)\n"+
					"  - another init or a container: talk service install --print shows the unit; or start talkd from your own startup script", why, s.user())
				return exitFailure
			}
			s.a.warnf("systemctl --user daemon-reload: %v\n  %s", err, strings.TrimSpace(string(out)))
			return exitFailure
		}
		steps = [][]string{{"systemctl", "--user", "enable", "--now", serviceUnit}}
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
	} else if !systemdStates[state] {
		// Not a state but an error (no user session, no systemctl): say so, and let a
		// script see that the answer is unknown.
		why := state
		if w, ok := noUserSession(out, err); ok {
			why = "no systemd user session: " + w
		} else if why == "" && err != nil {
			why = err.Error()
		}
		fmt.Fprintf(s.a.stdout, "state: unknown\n")
		s.a.warnf("cannot tell whether talkd runs (%s)", why)
		return exitFailure
	}
	fmt.Fprintf(s.a.stdout, "state: %s\n", state)
	return exitOK
}

// systemdStates are the answers of systemctl is-active that are states.
var systemdStates = map[string]bool{"active": true, "inactive": true, "failed": true, "activating": true,
	"deactivating": true, "reloading": true, "maintenance": true, "refreshing": true}

// noUserSession recognises systemctl's failures that mean "no user manager to talk to",
// and returns the short reason.
func noUserSession(out []byte, err error) (string, bool) {
	if errors.Is(err, exec.ErrNotFound) {
		return "systemctl is not installed", true
	}
	text := strings.TrimSpace(string(out))
	for _, sign := range []string{"Failed to connect to bus", "No medium found", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR",
		"System has not been booted with systemd", "Failed to connect to user scope bus"} {
		if strings.Contains(text, sign) {
			line, _, _ := strings.Cut(text, "\n")
			return line, true
		}
	}
	return "", false
}

func (s service) user() string {
	if u := s.a.getenv("USER"); u != "" {
		return u
	}
	return "$USER"
}

// writeEnvFile writes the service's environment file unless it exists (it is the user's
// once written) and returns its path.
func (s service) writeEnvFile() (string, error) {
	path, err := s.envFile()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	pathVar := s.a.getenv("PATH")
	if pathVar == "" {
		pathVar = "/usr/local/bin:/usr/bin:/bin"
	}
	if err := os.WriteFile(path, []byte(envFileContent(pathVar)), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(s.a.stdout, "wrote %s (the service's PATH and tokens)\n", path)
	return path, nil
}

// print shows the service definition without installing anything.
func (s service) print(talkd string) int {
	switch s.goos {
	case "darwin":
		fmt.Fprint(s.a.stdout, launchdPlist(talkd, s.a.getenv("HOME")))
	case "windows":
		fmt.Fprintln(s.a.stdout, windowsTask(talkd))
	default:
		env, err := s.envFile()
		if err != nil {
			s.a.warnf("%v", err)
			return exitFailure
		}
		fmt.Fprint(s.a.stdout, systemdUnit(talkd, env))
	}
	return exitOK
}

// autostartFile is the XDG autostart entry: desktop sessions start it at login.
func (s service) autostartFile() (string, error) {
	dir, err := s.configDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "autostart", "talkd.desktop"), nil
}

// autostartEntry runs talkd at login through sh, which reads the environment file first
// (the same file the systemd unit reads).
func autostartEntry(talkd, envFile string) string {
	q := func(p string) string { return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'" }
	script := "set -a; [ -r " + q(envFile) + " ] && . " + q(envFile) + "; exec " + q(talkd)
	return `[Desktop Entry]
Type=Application
Name=talkd
Comment=the voice (and plan keeper) of your agents
Exec=sh -c "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`", "$", `\$`, "%", "%%").Replace(script) + `"
Terminal=false
NoDisplay=true
X-GNOME-Autostart-enabled=true
`
}

func (s service) installAutostart(talkd string) int {
	if s.goos != "linux" {
		s.a.warnf("--autostart is for Linux desktop sessions")
		return exitFailure
	}
	path, err := s.autostartFile()
	if err != nil {
		s.a.warnf("%v", err)
		return exitFailure
	}
	env, err := s.writeEnvFile()
	if err != nil {
		s.a.warnf("%v", err)
		return exitFailure
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.a.warnf("create %s: %v", filepath.Dir(path), err)
		return exitFailure
	}
	if err := os.WriteFile(path, []byte(autostartEntry(talkd, env)), 0o644); err != nil {
		s.a.warnf("write %s: %v", path, err)
		return exitFailure
	}
	fmt.Fprintf(s.a.stdout, "wrote %s (runs %s at your next desktop login; start it now with: talkd &)\n", path, talkd)
	return exitOK
}

func (s service) uninstallAutostart() int {
	path, err := s.autostartFile()
	if err != nil {
		s.a.warnf("%v", err)
		return exitFailure
	}
	if err := os.Remove(path); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(s.a.stdout, "not installed (%s does not exist)\n", path)
		return exitOK
	} else if err != nil {
		s.a.warnf("remove %s: %v", path, err)
		return exitFailure
	}
	fmt.Fprintf(s.a.stdout, "removed %s\n", path)
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
