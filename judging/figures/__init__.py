"""Figures as files: the formats a figure may come in and the safe rasterization of SVG
(`formats`), and the data files that carry a figure's series in data units (`data`).

Not a stage but the shared shape of a figure below the two that read figures and may not import
each other: intake (a logbook's inline figures and raw data fences, a manifest's figure data
paths, `check`'s validation) and signals (loading figure files, turning figure data into chart
readings). Reads files; writes nothing.
"""
