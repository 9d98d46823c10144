-- A tiny queue module.
local M = {}

local function log(msg)
  print("[queue] " .. msg)
end

function M.new()
  local self = { items = {}, size = 0 }
  local function helper()
    return 1
  end
  return setmetatable(self, { __index = M })
end

function M:push(item)
  self.size = self.size + 1
  self.items[self.size] = item
end

M.pop = function(self)
  local item = self.items[self.size]
  self.size = self.size - 1
  return item
end

function M:push(item, priority)
  log("größe")
end

return M
