# Runs the scenarios with `go test` for test/e2e/run.sh and test/e2e-node/run.sh
# (sourced). go test runs in the background and in its own session, so that a
# signal to the script is handled at once (bash runs traps only between
# foreground commands) and reaches the whole test process group.
#
#   trap on_signal INT TERM                 once, before anything is started
#   scenarios_test DIR [go test args...]    sets scenarios_status
test_pid=
on_signal() {
	[[ -n "$test_pid" ]] && kill -TERM -- "-$test_pid" 2>/dev/null
	exit 130
}

# No locals here: the EXIT traps of the callers run inside this function when a
# signal arrives, and bash would show them its locals (a local "dir" once made
# a caller's cleanup act on the wrong directory).
scenarios_test() {
	set +e
	setsid bash -c 'cd "$1" && shift && exec go test -count=1 -v -timeout 40m ./scenarios "$@"' _ "$@" &
	test_pid=$!
	wait "$test_pid"
	scenarios_status=$?
	test_pid=
	set -e
}
