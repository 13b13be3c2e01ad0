#!/usr/bin/env bash
# Runs the official MCP conformance suite against a talkd that is already listening.
#
#   test/conformance/run.sh http://127.0.0.1:PORT/mcp [output-dir]
#
# It starts nothing itself: the caller starts the daemon (local mode, fake provider) and
# passes its /mcp URL. Every generic scenario of both protocol revisions listed in
# shared/mcp/PROTOCOL.md runs; the only tolerated failures are the four server-stateless
# checks that need fixture tools talkd does not ship (expected-failures.yaml). Exit code 0
# means every scenario passed against that baseline. Needs npx (Node 22 is fetched by npx).
set -u

url="${1:-${TALK_MCP_URL:-}}"
if [ -z "$url" ]; then
	echo "usage: $0 http://127.0.0.1:PORT/mcp [output-dir]" >&2
	exit 2
fi
outdir="${2:-}"
here="$(cd "$(dirname "$0")" && pwd)"
baseline="$here/expected-failures.yaml"
suite="@modelcontextprotocol/conformance@0.2.0-alpha.11"

scenarios_2025="server-initialize server-session-lifecycle ping logging-set-level completion-complete tools-list resources-list prompts-list server-sse-multiple-streams dns-rebinding-protection"
scenarios_2026="server-stateless completion-complete tools-list resources-list prompts-list server-sse-multiple-streams dns-rebinding-protection caching sep-2164-resource-not-found input-required-result-unsupported-methods http-header-validation"

failed=0
summary=""
run() {
	local rev="$1" scenario="$2" log rc
	log="$(mktemp)"
	local extra=()
	if [ -n "$outdir" ]; then
		extra=(-o "$outdir/$rev/$scenario")
	fi
	npx -y -p node@22 -p "$suite" conformance server --url "$url" --scenario "$scenario" \
		--spec-version "$rev" --expected-failures "$baseline" "${extra[@]}" >"$log" 2>&1
	rc=$?
	# Result lines only: the per-check lines, the totals and the baseline verdict.
	grep -E '\] .*(SUCCESS|FAILURE|WARNING|SKIPPED|INFO)|^Passed:|~ |✗ |✓ |Baseline' "$log" | sed -e 's/\x1b\[[0-9;]*m//g' -e "s/^/[$rev $scenario] /"
	if [ "$rc" -ne 0 ]; then
		failed=1
		echo "[$rev $scenario] exit code $rc; full output:" >&2
		sed -e 's/\x1b\[[0-9;]*m//g' "$log" >&2
	fi
	summary="$summary$rev $scenario: exit $rc"$'\n'
	rm -f "$log"
}

for s in $scenarios_2025; do run 2025-11-25 "$s"; done
for s in $scenarios_2026; do run 2026-07-28 "$s"; done

echo
echo "Summary:"
printf '%s' "$summary"
exit "$failed"
