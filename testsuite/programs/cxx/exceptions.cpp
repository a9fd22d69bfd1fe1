// C++ exceptions: thrown through several frames with destructors to run,
// rethrown, caught by base class, and thrown out of a qsort comparison
// callback so the unwinder has to walk through glibc's qsort frames (built
// with unwind tables on x86-64) back into main.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int destroyed = 0;

struct Guard {
    int id;
    explicit Guard(int i) : id(i) {}
    ~Guard() { destroyed++; }
};

struct DepthError : std::runtime_error {
    int depth;
    DepthError(const std::string &what, int d) : std::runtime_error(what), depth(d) {}
};

int descend(int depth, int limit)
{
    Guard g(depth);
    if (depth == limit)
        throw DepthError("bottom reached", depth);
    return descend(depth + 1, limit) + g.id;
}

void rethrow_with_context(int limit)
{
    try {
        descend(0, limit);
    } catch (DepthError &e) {
        throw std::logic_error(std::string("wrapped: ") + e.what() + " at depth " + std::to_string(e.depth));
    }
}

struct ComparatorGaveUp {
    int a, b;
    int comparisons;
};

int comparisons = 0;

// qsort is a C function; the exception leaves through its frames.
int compare_or_throw(const void *pa, const void *pb)
{
    int a = *static_cast<const int *>(pa), b = *static_cast<const int *>(pb);
    if (++comparisons == 40)
        throw ComparatorGaveUp{ a, b, comparisons };
    return (a > b) - (a < b);
}

} // namespace

int main()
{
    for (int limit : { 1, 5, 50, 500 }) {
        destroyed = 0;
        try {
            descend(0, limit);
            std::cout << "no exception (WRONG)\n";
        } catch (const std::runtime_error &e) {
            std::cout << "caught '" << e.what() << "' from depth " << limit << ", destructors run: " << destroyed
                      << "\n";
        }
    }

    try {
        rethrow_with_context(7);
    } catch (const std::exception &e) {
        std::cout << "caught by base class: " << e.what() << "\n";
    }

    try {
        try {
            throw 42;
        } catch (int v) {
            std::cout << "inner caught int " << v << ", rethrowing\n";
            throw;
        }
    } catch (int v) {
        std::cout << "outer caught int " << v << "\n";
    }

    std::vector<int> values;
    for (int i = 0; i < 200; i++)
        values.push_back((i * 7919) % 211);
    for (int round = 0; round < 3; round++) {
        comparisons = 0;
        std::vector<int> copy = values;
        try {
            std::qsort(copy.data(), copy.size(), sizeof(int), compare_or_throw);
            std::cout << "qsort finished (WRONG)\n";
        } catch (const ComparatorGaveUp &e) {
            std::cout << "round " << round << ": comparator threw after " << e.comparisons << " comparisons\n";
        }
    }

    // The program must still work normally after all that unwinding.
    comparisons = -1000000;
    std::qsort(values.data(), values.size(), sizeof(int), compare_or_throw);
    std::cout << "sorted: first " << values.front() << " last " << values.back() << "\n";

    try {
        std::vector<int> v(3);
        (void)v.at(10);
    } catch (const std::out_of_range &) {
        std::cout << "std::out_of_range from vector::at\n";
    }
    std::cout << "END exceptions" << std::endl;
    return 0;
}
