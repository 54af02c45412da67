-- wrk script: POST the file named by $BODY to every request, and print one
-- machine-readable line at the end (bench/run.sh reads it).
local f = assert(io.open(os.getenv("BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"

function done(summary, latency, requests)
	local e = summary.errors
	io.write(string.format(
		"WRKJSON {\"requests\":%d,\"duration_us\":%d,\"io_errors\":%d,\"non2xx\":%d," ..
		"\"p50_us\":%d,\"p90_us\":%d,\"p99_us\":%d,\"max_us\":%d}\n",
		summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout,
		e.status, latency:percentile(50), latency:percentile(90), latency:percentile(99),
		latency.max))
end
