"""Ranking: parse the request and query, the question worked out once, keyword (BM25), translated
and semantic lists, fusion, relevance, answers, result rows; and opening the turns around a hit.
"""
