"""``mmbatch report``: leaderboards of several models from ``score``'s metrics tables, as Markdown or HTML.

:mod:`.inputs` reads the tables, :mod:`.leaderboard` arranges them per benchmark, :mod:`.charts` draws SVG charts,
:mod:`.markdown` and :mod:`.html` write the report.
"""
