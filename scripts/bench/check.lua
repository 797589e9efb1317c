-- wrk script (scripts/bench-topology.sh): POSTs checks and verifies every answer.
-- Arguments (after `--`): the data file written by setup.py, the bearer token ("-" for none).
-- The data file returns a list of {path, body, item, admitted}; each item appears once, so an
-- answer is matched to its expectation by the item it names (several connections share a
-- thread, so answers do not arrive in request order).
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  reqs = dofile(args[1])
  expected = {}
  for _, r in ipairs(reqs) do expected[r.item] = r.admitted end
  wrk.headers["content-type"] = "application/json"
  if args[2] and args[2] ~= "-" then wrk.headers["authorization"] = "Bearer " .. args[2] end
  -- Threads start at different places in the list.
  i = math.random(#reqs)
  n, bad = 0, 0
end

function request()
  i = i % #reqs + 1
  local r = reqs[i]
  return wrk.format("POST", r.path, nil, r.body)
end

function response(status, headers, body)
  n = n + 1
  if status ~= 200 then bad = bad + 1; return end
  local item = body:match('"item":"([^"]+)"')
  local admitted = body:match('"admitted":(%a+)')
  if item == nil or expected[item] == nil or tostring(expected[item]) ~= admitted then bad = bad + 1 end
end

function done(summary, latency, requests)
  local total, wrong = 0, 0
  for _, t in ipairs(threads) do
    total = total + t:get("n")
    wrong = wrong + t:get("bad")
  end
  io.write(string.format("CHECKED %d answers, %d wrong\n", total, wrong))
end
