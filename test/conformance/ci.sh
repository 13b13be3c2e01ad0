#!/usr/bin/env bash
# Builds talkd, starts it isolated (temporary HOME and XDG dirs, local mode, fake voice
# provider, null sink, an ephemeral loopback port), runs run.sh against its /mcp, stops it
# and exits with run.sh's exit code. Meant for .ci/run:
#
#   test/conformance/ci.sh [output-dir]
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
pid=""
cleanup() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && go build -o "$work/talkd" ./cmd/talkd) || { echo "conformance: building talkd failed" >&2; exit 1; }
mkdir -p "$work/home"
env -i PATH="$PATH" HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" \
	XDG_STATE_HOME="$work/home/.local/state" XDG_DATA_HOME="$work/home/.local/share" \
	TALK_LISTEN=127.0.0.1:0 TALK_PROVIDER=fake TALK_SINK=null \
	"$work/talkd" 2>"$work/talkd.log" &
pid=$!

addr=""
for _ in $(seq 200); do
	addr="$(sed -n 's/.*msg=listening addr=\([^ ]*\).*/\1/p' "$work/talkd.log")"
	[ -n "$addr" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "conformance: talkd exited before listening:" >&2
		cat "$work/talkd.log" >&2
		exit 1
	fi
	sleep 0.1
done
if [ -z "$addr" ]; then
	echo "conformance: talkd did not start listening:" >&2
	cat "$work/talkd.log" >&2
	exit 1
fi

"$root/test/conformance/run.sh" "http://$addr/mcp" "$@"
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "conformance: talkd log:" >&2
	cat "$work/talkd.log" >&2
fi
exit "$rc"
