"""Exact extraction results for one realistic sample file per language.

Each row is (name, kind, parent, first line, last line, text of the span's first line, text of
its last line): line numbers and the two texts pin `start` and `end` to the byte. The samples
contain non-ASCII text before later symbols, so a char/byte offset mix-up shows as a wrong slice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tinymem.symbols import Extraction, extract, top_level_names

DATA = Path(__file__).parent / "data"


def read(name: str) -> bytes:
    # Python samples are stored as .py.txt so that linters and formatters leave them alone.
    path = DATA / name
    return (path if path.exists() else DATA / f"{name}.txt").read_bytes()


Row = tuple[str, str, str | None, int, int, str, str]

EXPECTED: dict[str, list[Row]] = {
    "sample.py": [
        ("MAX_RETRIES", "constant", None, 8, 8, "MAX_RETRIES = 3", "MAX_RETRIES = 3"),
        ("TIMEOUT", "constant", None, 9, 9, "TIMEOUT: float = 2.5", "TIMEOUT: float = 2.5"),
        (
            "fetch_user",
            "function",
            None,
            14,
            20,
            "# Fetch one user; retried on failure.",
            '    return {"id": str(user_id), "name": "Zoë"}',
        ),
        ("Client", "class", None, 23, 49, "@dataclass", "        return None"),
        (
            "Client.get",
            "method",
            "Client",
            30,
            31,
            "def get(self, path: str) -> str:",
            "        return self.base_url + path",
        ),
        ("Client.status", "method", "Client", 33, 36, "# The cached status", "        return 200"),
        (
            "Client.status#2",
            "method",
            "Client",
            38,
            40,
            "@status.setter",
            "        self._status = value",
        ),
        ("Client.Config", "class", "Client", 42, 46, "class Config:", '            return "Größe"'),
        (
            "Client.Config.dump",
            "method",
            "Client.Config",
            45,
            46,
            "def dump(self) -> str:",
            '            return "Größe"',
        ),
        (
            "Client.close",
            "method",
            "Client",
            48,
            49,
            "async def close(self) -> None:",
            "        return None",
        ),
        ("Ünïcödé", "class", None, 52, 54, "class Ünïcödé:", '        return "ß"'),
        (
            "Ünïcödé.naïve",
            "method",
            "Ünïcödé",
            53,
            54,
            "def naïve(self) -> str:",
            '        return "ß"',
        ),
        (
            "fetch_user#2",
            "function",
            None,
            57,
            58,
            "def fetch_user(user_id: int) -> None:  # redefinition",
            "    return None",
        ),
    ],
    "sample.js": [
        ("startServer", "function", None, 6, 13, "/**", "}"),
        ("idGenerator", "function", None, 15, 18, "function* idGenerator() {", "}"),
        (
            "Server",
            "class",
            None,
            20,
            48,
            "export default class Server extends EventEmitter {",
            "}",
        ),
        ("Server.constructor", "method", "Server", 23, 26, "constructor(options) {", "  }"),
        ("Server.connections", "method", "Server", 28, 31, "// Number of open connections.", "  }"),
        ("Server.connections#2", "method", "Server", 33, 35, "set connections(value) {", "  }"),
        ("Server.create", "method", "Server", 37, 39, "static create() {", "  }"),
        ("Server.#log", "method", "Server", 41, 43, "#log(message) {", "  }"),
        ("Server.onClose", "method", "Server", 45, 47, "onClose = () => {", "  };"),
        (
            "formatName",
            "function",
            None,
            50,
            50,
            "export const formatName = (first, last) => `${first} ${last}`;",
            "export const formatName = (first, last) => `${first} ${last}`;",
        ),
        ("Plugin", "class", None, 58, 60, "let Plugin = class {", "};"),
        ("Plugin.install", "method", "Plugin", 59, 59, "install() {}", "install() {}"),
        ("legacy", "function", None, 62, 64, "var legacy = function () {", "};"),
    ],
    "sample.ts": [
        ("CacheOptions", "interface", None, 3, 7, "/** Options accepted by the cache. */", "}"),
        (
            "Key",
            "type",
            None,
            9,
            9,
            "export type Key = string | number;",
            "export type Key = string | number;",
        ),
        ("Level", "enum", None, 11, 14, "export enum Level {", "}"),
        ("Cache", "class", None, 16, 34, "// Keeps values for a while.", "}"),
        (
            "Cache.load",
            "method",
            "Cache",
            20,
            20,
            "abstract load(key: Key): Promise<V>;",
            "abstract load(key: Key): Promise<V>;",
        ),
        (
            "Cache.get",
            "method",
            "Cache",
            22,
            22,
            "get(key: Key): V | undefined;",
            "get(key: Key): V | undefined;",
        ),
        (
            "Cache.get#2",
            "method",
            "Cache",
            23,
            23,
            "get(key: Key, fallback: V): V;",
            "get(key: Key, fallback: V): V;",
        ),
        (
            "Cache.get#3",
            "method",
            "Cache",
            24,
            26,
            "get(key: Key, fallback?: V): V | undefined {",
            "  }",
        ),
        ("Cache.clear", "method", "Cache", 28, 31, "@logged", "  }"),
        ("Util.Strings", "namespace", "Util", 36, 42, "export namespace Util.Strings {", "}"),
        (
            "Util.Strings.trim",
            "function",
            "Util.Strings",
            37,
            39,
            "export function trim(s: string): string {",
            "  }",
        ),
        (
            "Util.Strings.upper",
            "function",
            "Util.Strings",
            41,
            41,
            "export const upper = (s: string): string => s.toUpperCase();",
            "export const upper = (s: string): string => s.toUpperCase();",
        ),
        ("express", "module", None, 44, 48, 'declare module "express" {', "}"),
        ("express.Request", "interface", "express", 45, 47, "interface Request {", "  }"),
        (
            "parse",
            "function",
            None,
            50,
            50,
            "export function parse(input: string): Key;",
            "export function parse(input: string): Key;",
        ),
        (
            "parse#2",
            "function",
            None,
            51,
            51,
            "export function parse(input: number): Key;",
            "export function parse(input: number): Key;",
        ),
        (
            "parse#3",
            "function",
            None,
            52,
            54,
            "export function parse(input: string | number): Key {",
            "}",
        ),
        (
            "greeting",
            "function",
            None,
            56,
            56,
            "const greeting = (name: string) => `Grüße, ${name}`;",
            "const greeting = (name: string) => `Grüße, ${name}`;",
        ),
        (
            "logged",
            "function",
            None,
            58,
            58,
            "function logged(target: object, key: string): void {}",
            "function logged(target: object, key: string): void {}",
        ),
    ],
    "sample.tsx": [
        ("ButtonProps", "type", None, 3, 6, "type ButtonProps = {", "};"),
        ("CounterButton", "function", None, 8, 20, "/** A button that counts its clicks. */", "}"),
        (
            "Badge",
            "function",
            None,
            22,
            22,
            "export const Badge = ({ text }: { text: string }) => <span>{text}</span>;",
            "export const Badge = ({ text }: { text: string }) => <span>{text}</span>;",
        ),
        ("PanelState", "interface", None, 24, 26, "interface PanelState {", "}"),
        (
            "Panel",
            "class",
            None,
            28,
            44,
            "export class Panel extends React.Component<{}, PanelState> {",
            "}",
        ),
        ("Panel.toggle", "method", "Panel", 31, 34, "// Toggle visibility.", "  };"),
        ("Panel.render", "method", "Panel", 36, 43, "render() {", "  }"),
        ("App", "function", None, 46, 48, "export default function App() {", "}"),
    ],
    "sample.go": [
        (
            "DefaultAddr",
            "constant",
            None,
            9,
            10,
            "// DefaultAddr is where the server listens.",
            'const DefaultAddr = ":8080"',
        ),
        ("ModeDev", "constant", None, 13, 13, 'ModeDev  = "dev"', 'ModeDev  = "dev"'),
        ("ModeProd", "constant", None, 14, 14, 'ModeProd = "prod"', 'ModeProd = "prod"'),
        (
            "started",
            "variable",
            None,
            17,
            17,
            "var started, stopped bool",
            "var started, stopped bool",
        ),
        (
            "stopped",
            "variable",
            None,
            17,
            17,
            "var started, stopped bool",
            "var started, stopped bool",
        ),
        (
            "Handler",
            "type",
            None,
            20,
            21,
            "// Handler handles one request.",
            "\tHandler func(w http.ResponseWriter, r *http.Request)",
        ),
        ("Port", "type", None, 22, 22, "Port    = int", "Port    = int"),
        ("Server", "struct", None, 25, 30, "// Server serves requests.", "}"),
        ("Store", "interface", None, 32, 34, "type Store[T any] interface {", "}"),
        ("NewServer", "function", None, 36, 40, '// NewServer builds a server for "größe".', "}"),
        ("Server.Start", "method", "Server", 42, 47, "// Start listens and serves.", "}"),
        ("Server.String", "method", "Server", 49, 51, "func (s Server) String() string {", "}"),
        ("Cache.Get", "method", "Cache", 53, 56, "func (c *Cache[K, V]) Get(key K) V {", "}"),
        ("init", "function", None, 58, 58, "func init() {}", "func init() {}"),
        ("init#2", "function", None, 60, 60, "func init() {}", "func init() {}"),
    ],
    "sample.rs": [
        (
            "MAX_ENTRIES",
            "constant",
            None,
            6,
            7,
            "/// Maximum number of entries.",
            "pub const MAX_ENTRIES: usize = 1024;",
        ),
        (
            "GREETING",
            "variable",
            None,
            9,
            9,
            'static GREETING: &str = "grüß dich";',
            'static GREETING: &str = "grüß dich";',
        ),
        ("Store", "struct", None, 11, 15, "/// A store of values.", "}"),
        ("Store.new", "method", "Store", 18, 21, "/// Creates an empty store.", "    }"),
        (
            "Store.get",
            "method",
            "Store",
            23,
            26,
            "pub fn get(&self, key: &str) -> Option<T> {",
            "    }",
        ),
        (
            "Store.fmt",
            "method",
            "Store",
            30,
            32,
            "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {",
            "    }",
        ),
        (
            "Store.fmt#2",
            "method",
            "Store",
            36,
            38,
            "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {",
            "    }",
        ),
        ("Backend", "trait", None, 41, 47, "pub trait Backend {", "}"),
        (
            "Backend.load",
            "method",
            "Backend",
            42,
            42,
            "fn load(&self, key: &str) -> Option<String>;",
            "fn load(&self, key: &str) -> Option<String>;",
        ),
        ("Backend.name", "method", "Backend", 44, 46, "fn name(&self) -> &'static str {", "    }"),
        ("Event", "enum", None, 49, 52, "pub enum Event {", "}"),
        ("Bits", "union", None, 54, 57, "pub union Bits {", "}"),
        (
            "Shared",
            "type",
            None,
            59,
            59,
            "pub type Shared<T> = std::sync::Arc<T>;",
            "pub type Shared<T> = std::sync::Arc<T>;",
        ),
        ("log", "macro", None, 61, 65, "macro_rules! log {", "}"),
        ("tests", "module", None, 67, 75, "mod tests {", "}"),
        ("tests.new_is_empty", "function", "tests", 70, 74, "#[test]", "    }"),
    ],
    "sample.java": [
        ("Store", "class", None, 6, 54, "/**", "}"),
        (
            "Store.Store",
            "method",
            "Store",
            18,
            19,
            "/** Creates an empty store. */",
            "    public Store() {}",
        ),
        (
            "Store.Store#2",
            "method",
            "Store",
            21,
            23,
            "public Store(Map<String, V> initial) {",
            "    }",
        ),
        ("Store.get", "method", "Store", 25, 28, "@Override", "    }"),
        ("Store.remove", "method", "Store", 30, 35, '// Removes a key; returns "größe".', "    }"),
        ("Store.Entry", "class", "Store", 37, 43, "static class Entry {", "    }"),
        ("Store.Entry.size", "method", "Store.Entry", 40, 42, "int size() {", "        }"),
        ("Store.Mode", "enum", "Store", 45, 51, "enum Mode {", "    }"),
        (
            "Store.Mode.writable",
            "method",
            "Store.Mode",
            48,
            50,
            "boolean writable() {",
            "        }",
        ),
        (
            "Store.Pair",
            "class",
            "Store",
            53,
            53,
            "record Pair(String key, int value) {}",
            "record Pair(String key, int value) {}",
        ),
        ("Repository", "interface", None, 56, 58, "interface Repository<V> {", "}"),
        (
            "Repository.get",
            "method",
            "Repository",
            57,
            57,
            "V get(String key);",
            "V get(String key);",
        ),
        ("Cached", "interface", None, 60, 62, "@interface Cached {", "}"),
    ],
    "sample.c": [
        ("BUFFER_SIZE", "macro", None, 4, 4, "#define BUFFER_SIZE 256", "#define BUFFER_SIZE 256"),
        (
            "MAX",
            "macro",
            None,
            5,
            5,
            "#define MAX(a, b) ((a) > (b) ? (a) : (b))",
            "#define MAX(a, b) ((a) > (b) ? (a) : (b))",
        ),
        ("node", "struct", None, 7, 11, "/* A node of the list. */", "};"),
        ("point_t", "struct", None, 13, 16, "typedef struct {", "} point_t;"),
        ("list", "struct", None, 18, 21, "typedef struct list {", "} list_t;"),
        (
            "ulong",
            "type",
            None,
            23,
            23,
            "typedef unsigned long ulong;",
            "typedef unsigned long ulong;",
        ),
        (
            "compare_fn",
            "type",
            None,
            24,
            24,
            "typedef int (*compare_fn)(const void *, const void *);",
            "typedef int (*compare_fn)(const void *, const void *);",
        ),
        ("number", "union", None, 26, 29, "union number {", "};"),
        (
            "color",
            "enum",
            None,
            31,
            31,
            "enum color { RED, GREEN, BLUE };",
            "enum color { RED, GREEN, BLUE };",
        ),
        ("list_push", "function", None, 35, 48, "/**", "}"),
        (
            "list_length",
            "function",
            None,
            50,
            52,
            "static int list_length(const list_t *list) {",
            "}",
        ),
        ("greeting", "function", None, 54, 56, "const char *greeting(void) {", "}"),
        ("debug_dump", "function", None, 59, 61, "void debug_dump(const list_t *list) {", "}"),
    ],
    "sample.cpp": [
        ("geo", "namespace", None, 4, 46, "namespace geo {", "}"),
        ("geo.Point", "struct", "geo", 6, 15, "/// A 2D point.", "};"),
        (
            "geo.Point.operator==",
            "method",
            "geo.Point",
            12,
            14,
            "bool operator==(const Point& other) const {",
            "    }",
        ),
        ("geo.detail", "namespace", "geo", 17, 19, "namespace detail {", "}"),
        (
            "geo.detail.square",
            "function",
            "geo.detail",
            18,
            18,
            "inline double square(double v) { return v * v; }",
            "inline double square(double v) { return v * v; }",
        ),
        ("geo.Shape", "class", "geo", 21, 26, "// Shapes have an area.", "};"),
        (
            "geo.Shape.~Shape",
            "method",
            "geo.Shape",
            24,
            24,
            "virtual ~Shape() = default;",
            "virtual ~Shape() = default;",
        ),
        ("geo.Polygon", "class", "geo", 28, 42, "template <typename T>", "};"),
        (
            "geo.Polygon.Polygon",
            "method",
            "geo.Polygon",
            31,
            31,
            "explicit Polygon(std::vector<T> points) : points_(std::move(points)) {}",
            "explicit Polygon(std::vector<T> points) : points_(std::move(points)) {}",
        ),
        (
            "geo.Polygon.area",
            "method",
            "geo.Polygon",
            33,
            33,
            "double area() const override { return 0.0; }",
            "double area() const override { return 0.0; }",
        ),
        ("geo.Polygon.Iterator", "class", "geo.Polygon", 35, 38, "class Iterator {", "    };"),
        (
            "geo.Polygon.Iterator.next",
            "method",
            "geo.Polygon.Iterator",
            37,
            37,
            "bool next() { return false; }",
            "bool next() { return false; }",
        ),
        (
            "geo.PointList",
            "type",
            "geo",
            44,
            44,
            "using PointList = std::vector<Point>;",
            "using PointList = std::vector<Point>;",
        ),
        ("geo.Point.norm", "method", "geo.Point", 48, 50, "double geo::Point::norm() const {", "}"),
        ("operator+", "function", None, 52, 55, '/** Adds two points ("Σ"). */', "}"),
        ("geo.Polygon.area#2", "method", "geo.Polygon", 57, 60, "template <>", "}"),
        ("main", "function", None, 62, 65, "int main() {", "}"),
    ],
    "sample.rb": [
        ("Storage", "module", None, 5, 52, "# Utilities for the store.", "end"),
        ("Storage.Memory", "class", "Storage", 9, 39, "# An in-memory backend.", "  end"),
        (
            "Storage.Memory.initialize",
            "method",
            "Storage.Memory",
            14,
            16,
            "def initialize",
            "    end",
        ),
        ("Storage.Memory.get", "method", "Storage.Memory", 18, 20, "def get(key)", "    end"),
        (
            "Storage.Memory.build",
            "method",
            "Storage.Memory",
            22,
            24,
            "def self.build(**opts)",
            "    end",
        ),
        ("Storage.Memory.default", "method", "Storage.Memory", 27, 29, "def default", "      end"),
        ("Storage.Memory.==", "method", "Storage.Memory", 32, 34, "def ==(other)", "    end"),
        (
            "Storage.Memory.get#2",
            "method",
            "Storage.Memory",
            36,
            38,
            "def get(key, fallback)",
            "    end",
        ),
        (
            "Storage.Error",
            "class",
            "Storage",
            41,
            41,
            "class Error < StandardError; end",
            "class Error < StandardError; end",
        ),
        ("Storage.Helpers", "module", "Storage", 43, 51, "module Helpers", "  end"),
        (
            "Storage.Helpers.encode",
            "method",
            "Storage.Helpers",
            44,
            46,
            "def self.encode(value)",
            "    end",
        ),
        ("Storage.Helpers.größe", "method", "Storage.Helpers", 48, 50, "def größe", "    end"),
        (
            "Storage.Disk",
            "class",
            "Storage",
            54,
            58,
            "class Storage::Disk < Storage::Memory",
            "end",
        ),
        ("Storage.Disk.path", "method", "Storage.Disk", 55, 57, "def path", "  end"),
        ("main", "function", None, 60, 62, "def main", "end"),
    ],
    "sample.lua": [
        ("log", "function", None, 4, 6, "local function log(msg)", "end"),
        ("M.new", "function", "M", 8, 14, "function M.new()", "end"),
        ("M.push", "function", "M", 16, 19, "function M:push(item)", "end"),
        ("M.pop", "function", "M", 21, 25, "M.pop = function(self)", "end"),
        ("M.push#2", "function", "M", 27, 29, "function M:push(item, priority)", "end"),
    ],
    "sample.kt": [
        (
            "User",
            "class",
            None,
            6,
            6,
            "data class User(val id: Int, val name: String)",
            "data class User(val id: Int, val name: String)",
        ),
        ("Repo", "interface", None, 8, 10, "interface Repo {", "}"),
        (
            "Repo.find",
            "method",
            "Repo",
            9,
            9,
            "fun find(id: Int): User?",
            "fun find(id: Int): User?",
        ),
        ("MemoryRepo", "class", None, 12, 26, "class MemoryRepo : Repo {", "}"),
        (
            "MemoryRepo.find",
            "method",
            "MemoryRepo",
            15,
            17,
            "override fun find(id: Int): User? {",
            "    }",
        ),
        ("MemoryRepo.add", "method", "MemoryRepo", 19, 21, "fun add(user: User) {", "    }"),
        (
            "MemoryRepo.empty",
            "method",
            "MemoryRepo",
            24,
            24,
            "fun empty(): MemoryRepo = MemoryRepo()",
            "fun empty(): MemoryRepo = MemoryRepo()",
        ),
        (
            "Color",
            "enum",
            None,
            28,
            28,
            "enum class Color { RED, GREEN }",
            "enum class Color { RED, GREEN }",
        ),
        ("Registry", "class", None, 30, 32, "object Registry {", "}"),
        (
            "Registry.lookup",
            "method",
            "Registry",
            31,
            31,
            "fun lookup(name: String): Int = name.length",
            "fun lookup(name: String): Int = name.length",
        ),
        (
            "shout",
            "function",
            None,
            34,
            34,
            "fun String.shout(): String = uppercase()",
            "fun String.shout(): String = uppercase()",
        ),
        ("main", "function", None, 36, 39, "suspend fun main() {", "}"),
    ],
    "sample.cs": [
        ("Shop.Orders", "namespace", "Shop", 4, 44, "namespace Shop.Orders", "}"),
        (
            "Shop.Orders.Line",
            "class",
            "Shop.Orders",
            6,
            7,
            "/// <summary>An order line; prices in cents.</summary>",
            "    public record Line(string Sku, int Cents);",
        ),
        (
            "Shop.Orders.IStore",
            "interface",
            "Shop.Orders",
            9,
            12,
            "public interface IStore",
            "    }",
        ),
        (
            "Shop.Orders.IStore.Find",
            "method",
            "Shop.Orders.IStore",
            11,
            11,
            "Line? Find(string sku);",
            "Line? Find(string sku);",
        ),
        (
            "Shop.Orders.MemoryStore",
            "class",
            "Shop.Orders",
            14,
            41,
            "/// <summary>Keeps orders in memory (Zoë's first cut).</summary>",
            "    }",
        ),
        (
            "Shop.Orders.MemoryStore.MemoryStore",
            "method",
            "Shop.Orders.MemoryStore",
            19,
            19,
            "public MemoryStore() { }",
            "public MemoryStore() { }",
        ),
        (
            "Shop.Orders.MemoryStore.Add",
            "method",
            "Shop.Orders.MemoryStore",
            21,
            22,
            '[Obsolete("use Add(Line)")]',
            "        public void Add(string sku, int cents) => Add(new Line(sku, cents));",
        ),
        (
            "Shop.Orders.MemoryStore.Add#2",
            "method",
            "Shop.Orders.MemoryStore",
            24,
            28,
            "public void Add(Line line)",
            "        }",
        ),
        (
            "Shop.Orders.MemoryStore.Count",
            "method",
            "Shop.Orders.MemoryStore",
            30,
            30,
            "public int Count => _lines.Count;",
            "public int Count => _lines.Count;",
        ),
        (
            "Shop.Orders.MemoryStore.Find",
            "method",
            "Shop.Orders.MemoryStore",
            32,
            32,
            "public Line? Find(string sku) => _lines.TryGetValue(sku, out var l) ? l : null;",
            "public Line? Find(string sku) => _lines.TryGetValue(sku, out var l) ? l : null;",
        ),
        (
            "Shop.Orders.MemoryStore.operator+",
            "method",
            "Shop.Orders.MemoryStore",
            34,
            38,
            "public static MemoryStore operator +(MemoryStore a, Line b)",
            "        }",
        ),
        (
            "Shop.Orders.MemoryStore.~MemoryStore",
            "method",
            "Shop.Orders.MemoryStore",
            40,
            40,
            "~MemoryStore() { }",
            "~MemoryStore() { }",
        ),
        (
            "Shop.Orders.Status",
            "enum",
            "Shop.Orders",
            43,
            43,
            "public enum Status { Open, Paid }",
            "public enum Status { Open, Paid }",
        ),
    ],
}

LANGUAGES = {
    "sample.py": "python",
    "sample.js": "javascript",
    "sample.ts": "typescript",
    "sample.tsx": "tsx",
    "sample.go": "go",
    "sample.rs": "rust",
    "sample.java": "java",
    "sample.cs": "csharp",
    "sample.c": "c",
    "sample.cpp": "cpp",
    "sample.rb": "ruby",
    "sample.lua": "lua",
    "sample.kt": "kotlin",
}


def rows(data: bytes, ex: Extraction) -> list[Row]:
    out: list[Row] = []
    for s in ex.symbols:
        lines = data[s.start : s.end].decode("utf-8").split("\n")
        out.append(
            (
                s.name,
                s.kind,
                s.parent,
                data.count(b"\n", 0, s.start) + 1,
                data.count(b"\n", 0, s.end) + 1,
                lines[0],
                lines[-1],
            )
        )
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_symbols_exact(name: str) -> None:
    data = read(name)
    ex = extract(f"src/{name}", data)
    assert ex.language == LANGUAGES[name]
    assert rows(data, ex) == EXPECTED[name]
    if ex.method == "tree-sitter":
        assert ex.clean and ex.reason is None
    else:
        assert ex.method == "regex" and not ex.clean
    assert [s.start for s in ex.symbols] == sorted(s.start for s in ex.symbols)


def _text(name: str, symbol: str) -> str:
    data = read(name)
    by_name = {s.name: s for s in extract(name, data).symbols}
    s = by_name[symbol]
    return data[s.start : s.end].decode("utf-8")


def test_python_decorated_span_includes_comment_and_decorator() -> None:
    assert _text("sample.py", "fetch_user") == (
        "# Fetch one user; retried on failure.\n"
        "@functools.lru_cache(maxsize=32)\n"
        "def fetch_user(user_id: int) -> dict[str, str]:\n"
        "    def _inner() -> None:\n"
        "        pass\n"
        "\n"
        '    return {"id": str(user_id), "name": "Zoë"}'
    )
    assert _text("sample.py", "Client.status") == (
        "# The cached status\n    @property\n    def status(self) -> int:\n        return 200"
    )


def test_python_unicode_offsets_are_bytes() -> None:
    assert _text("sample.py", "Ünïcödé.naïve") == 'def naïve(self) -> str:\n        return "ß"'


def test_rust_attributes_and_doc_comments() -> None:
    assert _text("sample.rs", "Store") == (
        "/// A store of values.\n"
        "#[derive(Debug, Default)]\n"
        "pub struct Store<T> {\n"
        "    items: HashMap<String, T>,\n"
        "}"
    )
    assert _text("sample.rs", "tests.new_is_empty").startswith("#[test]\n    fn new_is_empty()")


def test_go_grouped_spec_and_receiver() -> None:
    assert _text("sample.go", "Port") == "Port    = int"
    assert _text("sample.go", "Server.Start").startswith("// Start listens and serves.\nfunc (s")


def test_js_export_keyword_in_span() -> None:
    assert _text("sample.js", "formatName") == (
        "export const formatName = (first, last) => `${first} ${last}`;"
    )
    assert _text("sample.js", "Server").startswith("export default class Server")


def test_cpp_template_and_out_of_line() -> None:
    assert _text("sample.cpp", "geo.Polygon.area#2") == (
        "template <>\ndouble geo::Polygon<int>::area() const {\n    return 1.0;\n}"
    )
    assert _text("sample.cpp", "operator+").startswith('/** Adds two points ("Σ"). */\n')


def test_java_annotation_and_javadoc() -> None:
    assert _text("sample.java", "Store.get") == (
        "@Override\n    public V get(String key) {\n        return items.get(key);\n    }"
    )


def test_c_typedef_struct_span() -> None:
    assert (
        _text("sample.c", "point_t") == "typedef struct {\n    double x;\n    double y;\n} point_t;"
    )


def test_ruby_comment_block() -> None:
    assert _text("sample.rb", "Storage.Memory").startswith(
        "# An in-memory backend.\n  # Thread-unsafe.\n  class Memory\n"
    )


def test_top_level_names() -> None:
    data = read("sample.py")
    assert top_level_names(extract("sample.py", data)) == {
        "MAX_RETRIES",
        "TIMEOUT",
        "fetch_user",
        "Client",
        "Ünïcödé",
        "fetch_user#2",
    }
