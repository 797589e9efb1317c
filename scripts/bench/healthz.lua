-- wrk script (scripts/bench-http.sh, scripts/bench-topology.sh): GET /healthz and verify every
-- answer, what HTTP alone costs on the same path as the checks. The client work per answer
-- matches check.lua's: a request formatted once in `init`, returned by `request`, and one
-- `find` per answer.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  formatted = { wrk.format("GET", "/healthz") }
  n, bad = 0, 0
end

function request()
  return formatted[1]
end

function response(status, headers, body)
  n = n + 1
  if status ~= 200 or not body:find('"ok"', 1, true) then bad = bad + 1 end
end

function done(summary, latency, requests)
  local total, wrong = 0, 0
  for _, t in ipairs(threads) do
    total = total + t:get("n")
    wrong = wrong + t:get("bad")
  end
  io.write(string.format("CHECKED %d answers, %d wrong\n", total, wrong))
end
