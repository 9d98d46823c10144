#include <string>
#include <vector>

namespace geo {

/// A 2D point.
struct Point {
    double x = 0;
    double y = 0;

    double norm() const;
    bool operator==(const Point& other) const {
        return x == other.x && y == other.y;
    }
};

namespace detail {
inline double square(double v) { return v * v; }
}  // namespace detail

// Shapes have an area.
class Shape {
public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
};

template <typename T>
class Polygon : public Shape {
public:
    explicit Polygon(std::vector<T> points) : points_(std::move(points)) {}

    double area() const override { return 0.0; }

    class Iterator {
    public:
        bool next() { return false; }
    };

private:
    std::vector<T> points_;
};

using PointList = std::vector<Point>;

}  // namespace geo

double geo::Point::norm() const {
    return detail::square(x) + detail::square(y);
}

/** Adds two points ("Σ"). */
geo::Point operator+(const geo::Point& a, const geo::Point& b) {
    return geo::Point{a.x + b.x, a.y + b.y};
}

template <>
double geo::Polygon<int>::area() const {
    return 1.0;
}

int main() {
    auto f = []() { return 1; };
    return f();
}
