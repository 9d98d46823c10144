using System;
using System.Collections.Generic;

namespace Shop.Orders
{
    /// <summary>An order line; prices in cents.</summary>
    public record Line(string Sku, int Cents);

    public interface IStore
    {
        Line? Find(string sku);
    }

    /// <summary>Keeps orders in memory (Zoë's first cut).</summary>
    public sealed class MemoryStore : IStore
    {
        private readonly Dictionary<string, Line> _lines = new();

        public MemoryStore() { }

        [Obsolete("use Add(Line)")]
        public void Add(string sku, int cents) => Add(new Line(sku, cents));

        public void Add(Line line)
        {
            Func<Line, string> key = l => l.Sku;
            _lines[key(line)] = line;
        }

        public int Count => _lines.Count;

        public Line? Find(string sku) => _lines.TryGetValue(sku, out var l) ? l : null;

        public static MemoryStore operator +(MemoryStore a, Line b)
        {
            a.Add(b);
            return a;
        }

        ~MemoryStore() { }
    }

    public enum Status { Open, Paid }
}
