# A small unittest suite run as `python3 -m unittest -v unittest_suite`.
import fractions
import itertools
import statistics
import unittest


class Arithmetic(unittest.TestCase):
    def test_big_integers(self):
        self.assertEqual(pow(3, 10_000, 10**9 + 7), 895629451)
        self.assertEqual((2**100_000).bit_length(), 100_001)

    def test_fractions(self):
        total = sum(fractions.Fraction(1, n) for n in range(1, 30))
        self.assertEqual(total.denominator, 2329089562800)

    def test_statistics(self):
        data = [x * 0.5 for x in range(101)]
        self.assertAlmostEqual(statistics.mean(data), 25.0)
        self.assertAlmostEqual(statistics.stdev(data), 14.650085323983612)


class Collections(unittest.TestCase):
    def test_sorting_is_stable(self):
        pairs = [(i % 5, i) for i in range(100)]
        ordered = sorted(pairs, key=lambda p: p[0])
        self.assertEqual(ordered[:3], [(0, 0), (0, 5), (0, 10)])

    def test_permutations(self):
        self.assertEqual(sum(1 for _ in itertools.permutations(range(7))), 5040)

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(1, 2)

    @unittest.skip("skipped on purpose")
    def test_skipped(self):
        raise AssertionError("never runs")


if __name__ == "__main__":
    unittest.main()
