"""Image retention: the periodic pass that retires the images heat_lite
built once nothing can use them any more (doc/specs/image_retention.md).

``sweep`` decides and applies one pass; ``runner`` runs it on one live
engine at a time. What keeps an image is ``db.image_needs.needed``.
"""
