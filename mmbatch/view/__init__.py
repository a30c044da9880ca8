"""``mmbatch view``: a static, self-contained HTML viewer of scored or extracted rows, one or several models.

:mod:`.thumbnails` turns images and video frames into small embedded JPEGs, :mod:`.rows` gathers what the page shows
for each row (across models), :mod:`.page` writes the HTML with its data and a small inline script.
"""
