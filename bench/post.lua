-- wrk script: POST a document (or an image when IMAGE_RES is set) with the bench key.
local key = os.getenv("BENCH_KEY")
local res = os.getenv("IMAGE_RES")
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer " .. key
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
if res and res ~= "" then
  wrk.path = "/api/v1/images"
  wrk.body = "name=bench&description=a+red+sunset+over+the+ocean&style=vivid&resolution=" .. res
else
  wrk.path = "/api/v1/documents"
  wrk.body = "name=bench&prompt=a+blog+post+about+green+tea+and+focus&template_id=9&creativity=0.5"
end
