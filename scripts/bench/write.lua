-- wrk script (scripts/bench-http.sh, scripts/bench-http-writes.sh, scripts/bench-topology.sh):
-- durable writes, each a new item with an id of its own; every answer must be 201. Arguments:
-- the store, a run tag (ids are unique per run), the bearer token ("-" for none), and
-- optionally a limit: each thread stops once it has that many answers.
local threads = {}
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("tid", next_id)
  table.insert(threads, thread)
end

function init(args)
  store, tag = args[1], args[2]
  wrk.headers["content-type"] = "application/json"
  if args[3] and args[3] ~= "-" then wrk.headers["authorization"] = "Bearer " .. args[3] end
  limit = tonumber(args[4])
  k, n, bad = 0, 0, 0
end

function request()
  k = k + 1
  local id = string.format("%s-%d-%d", tag, tid, k)
  local body = string.format('{"id":"%s","owner":"own","content":"write %s","origin":"public"}', id, id)
  return wrk.format("POST", "/v1/stores/" .. store .. "/items", nil, body)
end

function response(status, headers, body)
  n = n + 1
  if status ~= 201 then bad = bad + 1 end
  if limit and n >= limit then wrk.thread:stop() end
end

function done(summary, latency, requests)
  local total, wrong = 0, 0
  for _, t in ipairs(threads) do
    total = total + t:get("n")
    wrong = wrong + t:get("bad")
  end
  io.write(string.format("CHECKED %d answers, %d wrong\n", total, wrong))
end
