"""The recall API: the FastAPI app, who may read which profile, and ``hermes recall serve``.
"""
