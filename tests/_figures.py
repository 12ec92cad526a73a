"""Checks of figures shared by the plot tests of several modules."""


def assert_axis_labels_inside(ax) -> None:
    """The x- and y-axis labels of ``ax`` lie inside its figure once drawn (not cut off when saved)."""
    ax.figure.canvas.draw()
    fig_box = ax.figure.bbox
    for label in (ax.xaxis.label, ax.yaxis.label):
        box = label.get_window_extent()
        assert fig_box.x0 <= box.x0 and box.x1 <= fig_box.x1, (label.get_text(), box, fig_box)
        assert fig_box.y0 <= box.y0 and box.y1 <= fig_box.y1, (label.get_text(), box, fig_box)
