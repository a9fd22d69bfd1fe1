// Standard library containers and algorithms printed through iostreams:
// vector, sort, map, string, plus stream formatting state (precision, hex,
// width, fill), which goes through locale facets.
#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

int main()
{
    std::vector<std::uint32_t> v;
    std::uint32_t x = 2463534242u;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v.push_back(x % 1000003);
    }
    std::sort(v.begin(), v.end());
    std::cout << "sorted: min " << v.front() << " median " << v[v.size() / 2] << " max " << v.back() << "\n";
    auto last = std::unique(v.begin(), v.end());
    std::cout << "distinct values: " << std::distance(v.begin(), last) << "\n";
    std::cout << "sum: " << std::accumulate(v.begin(), v.end(), std::uint64_t{ 0 }) << "\n";

    std::stable_sort(v.begin(), v.end(), [](std::uint32_t a, std::uint32_t b) { return a % 17 < b % 17; });
    std::cout << "stable by mod 17, first five:";
    for (int i = 0; i < 5; i++)
        std::cout << ' ' << v[i];
    std::cout << "\n";

    const std::string text =
        "the quick brown fox jumps over the lazy dog and the dog sleeps while the fox runs over the hill";
    std::map<std::string, int> counts;
    std::istringstream words(text);
    for (std::string w; words >> w;)
        counts[w]++;
    for (const auto &[word, n] : counts)
        std::cout << std::setw(8) << std::left << word << std::right << std::setw(3) << n << "\n";

    std::string s = text;
    std::reverse(s.begin(), s.end());
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return c == ' ' ? '_' : c - 32; });
    std::cout << s.substr(0, 40) << " find(XOF)=" << s.find("XOF") << "\n";

    std::map<int, std::vector<double>> buckets;
    for (int i = 0; i < 50; i++)
        buckets[i % 7].push_back(i / 7.0);
    for (const auto &[key, vals] : buckets)
        std::cout << key << ": n=" << vals.size() << " sum=" << std::setprecision(17)
                  << std::accumulate(vals.begin(), vals.end(), 0.0) << "\n";

    std::cout << std::hex << std::showbase << 255 << ' ' << std::dec << std::noshowbase << std::setfill('*')
              << std::setw(10) << 42 << ' ' << std::scientific << std::setprecision(6) << 6.02214076e23 << ' '
              << std::fixed << std::setprecision(3) << 3.14159 << "\n";
    std::cout << "END containers" << std::endl;
    return 0;
}
