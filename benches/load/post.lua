-- wrk script: POST the AdmissionReview named by REVIEW (a file) on every request.
local file = assert(io.open(os.getenv("REVIEW"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"

-- Count answers other than 200 so a broken run cannot pass for a fast one.
local failures = 0
function response(status, headers, body)
  if status ~= 200 then failures = failures + 1 end
end

function done(summary, latency, requests)
  io.write(string.format("non-200 answers: %d\n", failures))
end
