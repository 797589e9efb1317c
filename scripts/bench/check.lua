-- wrk script (scripts/bench-http.sh, scripts/bench-topology.sh): POSTs checks and verifies
-- every answer. healthz-shaped.lua loads this file and relies on its globals (`formatted`,
-- `count`, `i`, `n`, `bad`) and on `setup`, `request` and `done`.
-- Arguments (after `--`): the data file written by setup.py, the bearer token ("-" for none).
-- The data file returns a list of {path, body, item, admitted}; each item appears once, so an
-- answer is matched to its expectation by the item it names (several connections share a
-- thread, so answers do not arrive in request order).
--
-- The client shares the cores with the server, so its work per answer is kept as small as
-- healthz.lua's: the requests are formatted once, in `init`, and each answer is verified with
-- one anchored match (an answer starts `{"item":"…","admitted":true|false`: the decision's
-- first two fields) and one table lookup; healthz.lua does one plain `find`.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  local reqs = dofile(args[1])
  wrk.headers["content-type"] = "application/json"
  if args[2] and args[2] ~= "-" then wrk.headers["authorization"] = "Bearer " .. args[2] end
  -- item -> "t" or "f", the first letter of the expected `admitted`.
  expected, formatted = {}, {}
  for k, r in ipairs(reqs) do
    expected[r.item] = r.admitted and "t" or "f"
    formatted[k] = wrk.format("POST", r.path, nil, r.body)
  end
  count = #formatted
  -- Threads start at different places in the list.
  i = math.random(count)
  n, bad = 0, 0
end

function request()
  i = i % count + 1
  return formatted[i]
end

function response(status, headers, body)
  n = n + 1
  if status ~= 200 then bad = bad + 1; return end
  local item, admitted = body:match('^{"item":"([^"]+)","admitted":(%a)')
  if item == nil or expected[item] ~= admitted then bad = bad + 1 end
end

function done(summary, latency, requests)
  local total, wrong = 0, 0
  for _, t in ipairs(threads) do
    total = total + t:get("n")
    wrong = wrong + t:get("bad")
  end
  io.write(string.format("CHECKED %d answers, %d wrong\n", total, wrong))
end
