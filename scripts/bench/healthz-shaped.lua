-- wrk script (scripts/bench-http.sh with BENCH_SHAPE=1): GET /healthz sent with each check's
-- request as check.lua sends it (its content-type and bearer token headers, its JSON body),
-- and every answer verified as healthz.lua verifies it. Beside /healthz and the check, it
-- shows what receiving a check's request costs on its own: the server reads the same bytes,
-- runs the same middleware, and answers /healthz's 15 bytes without parsing the body.
-- Arguments (after `--`): the data file written by setup.py, the bearer token ("-" for none).
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  local reqs = dofile(args[1])
  wrk.headers["content-type"] = "application/json"
  if args[2] and args[2] ~= "-" then wrk.headers["authorization"] = "Bearer " .. args[2] end
  formatted = {}
  for k, r in ipairs(reqs) do
    formatted[k] = wrk.format("GET", "/healthz", nil, r.body)
  end
  count = #formatted
  i = math.random(count)
  n, bad = 0, 0
end

function request()
  i = i % count + 1
  return formatted[i]
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
