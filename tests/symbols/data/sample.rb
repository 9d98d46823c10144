# frozen_string_literal: true

require "json"

# Utilities for the store.
module Storage
  VERSION = "1.0"

  # An in-memory backend.
  # Thread-unsafe.
  class Memory
    attr_reader :items

    def initialize
      @items = {}
    end

    def get(key)
      @items[key]
    end

    def self.build(**opts)
      new
    end

    class << self
      def default
        @default ||= build
      end
    end

    def ==(other)
      other.is_a?(Memory) && items == other.items
    end

    def get(key, fallback)
      @items.fetch(key, fallback)
    end
  end

  class Error < StandardError; end

  module Helpers
    def self.encode(value)
      JSON.generate(value)
    end

    def größe
      "groß"
    end
  end
end

class Storage::Disk < Storage::Memory
  def path
    "/tmp/store"
  end
end

def main
  Storage::Memory.build.get(:a)
end
