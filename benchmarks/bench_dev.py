"""Every dev set, every method side by side in one run: LoCoMo (en, zh, zhpool, zhmix, xl, rev), FriendsQA
(friends, friends_shared), MemoryBank (mbcn, mben), and wrong-project quiet.

    python -m benchmarks dev                                   # the per-set table (benchmarks/README.md)
    python -m benchmarks dev --json benchmarks/out/dev.json --per-question --query-cache benchmarks/out/queries.pickle
    python -m benchmarks dev --suites friends mbcn --methods bm25 keyword hybrid

``bench_locomo``'s runner with every dev set as its default (its ``--help`` lists the arguments);
``python -m benchmarks paired`` compares two arms of it per question.
"""

from __future__ import annotations

import sys

from benchmarks import bench_locomo, dev_worlds

DEV_SUITES = (*dev_worlds.DEV_SETS, "wrong")


def main(argv: list[str] | None = None) -> int:
    return bench_locomo.main(argv, default_suites=DEV_SUITES)


if __name__ == "__main__":
    sys.exit(main())
