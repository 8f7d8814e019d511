-- wrk script: POST the AdmissionReview named by REVIEW (a file) on every request.
local file = assert(io.open(os.getenv("REVIEW"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"

-- Answers other than 2xx/3xx, over every thread (wrk aggregates them in the summary), so a
-- broken run cannot pass for a fast one.
function done(summary, latency, requests)
  io.write(string.format("non-200 answers: %d\n", summary.errors.status))
end
