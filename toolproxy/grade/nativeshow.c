/* `showing.show` in C, part of `nativegrade.c`: a value shortened for a failure's detail,
   exactly as `showing._short` (and so `reprlib.Repr(maxlevel=3, maxstring=80,
   maxother=80, maxlist=6, maxdict=6)`) writes JSON's own values and tuples; anything else
   (a str or int subclass, a set, a dict with a key that is not a str) is shown by
   `showing.show` itself. `nativegrade.show` gives it to the tests. */
#include "nativegrade.h"

#define LEVEL 3   /* showing._LEVEL */
#define STRING 80 /* showing._STRING */
#define OTHER 80  /* showing._OTHER */
#define LONG 40   /* showing._LONG */
#define ITEMS 6   /* showing._ITEMS */

static PyObject *shortened(PyObject *x, int level);

/* text[len(text) - k:] as Python reads it: a start below 0 counts from the end. */
static PyObject *last(PyObject *text, Py_ssize_t k)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), start = n - k;
    if (start < 0)
        start += n;
    return PyUnicode_Substring(text, start < 0 ? 0 : start, n);
}

/* showing._elide: `text`'s ends around "...", `limit` characters in all (a new str). */
static PyObject *elide(PyObject *text, Py_ssize_t limit)
{
    Py_ssize_t i = (limit - 3) / 2;
    PyObject *head = PyUnicode_Substring(text, 0, i);
    PyObject *tail = head ? last(text, limit - 3 - i) : NULL;
    PyObject *found = tail ? PyUnicode_FromFormat("%U...%U", head, tail) : NULL;
    Py_XDECREF(head);
    Py_XDECREF(tail);
    return found;
}

/* showing._cut: `text` (stolen), elided past `limit` characters. */
static PyObject *cut(PyObject *text, Py_ssize_t limit)
{
    if (text == NULL || PyUnicode_GET_LENGTH(text) <= limit)
        return text;
    Py_SETREF(text, elide(text, limit));
    return text;
}

/* showing._short_str */
static PyObject *short_str(PyObject *x)
{
    PyObject *head = PyUnicode_Substring(x, 0, STRING);
    PyObject *text = head ? PyObject_Repr(head) : NULL;
    Py_XDECREF(head);
    if (text == NULL || PyUnicode_GET_LENGTH(text) <= STRING)
        return text;
    Py_DECREF(text);
    Py_ssize_t i = (STRING - 3) / 2;
    PyObject *front = PyUnicode_Substring(x, 0, i);
    PyObject *back = front ? last(x, STRING - 3 - i) : NULL;
    PyObject *ends = back ? PyUnicode_Concat(front, back) : NULL;
    PyObject *shown = ends ? PyObject_Repr(ends) : NULL;
    Py_XDECREF(front);
    Py_XDECREF(back);
    Py_XDECREF(ends);
    if (shown != NULL)  /* elided whatever its length, as _short_str does */
        Py_SETREF(shown, elide(shown, STRING));
    return shown;
}

/* ", ".join(pieces) between `left` and `right`, "..." last when `more` (pieces stolen). */
static PyObject *joined(PyObject *pieces, int more, const char *left, const char *trail,
                        const char *right)
{
    if (pieces == NULL)
        return NULL;
    PyObject *fill = more ? PyUnicode_FromString("...") : NULL;
    if (more && (fill == NULL || PyList_Append(pieces, fill) < 0)) {
        Py_XDECREF(fill);
        Py_DECREF(pieces);
        return NULL;
    }
    Py_XDECREF(fill);
    PyObject *comma = PyUnicode_FromString(", ");
    PyObject *inner = comma ? PyUnicode_Join(comma, pieces) : NULL;
    PyObject *found = inner ? PyUnicode_FromFormat("%s%U%s%s", left, inner, trail, right) : NULL;
    Py_XDECREF(comma);
    Py_XDECREF(inner);
    Py_DECREF(pieces);
    return found;
}

/* showing._short_items over `n` items (NULL without an error: a foreign item). */
static PyObject *short_items(PyObject *const *items, Py_ssize_t n, int level, const char *left,
                             const char *right, const char *trail)
{
    if (n == 0 || level <= 0)
        return PyUnicode_FromFormat("%s%s%s", left, n == 0 ? "" : "...", right);
    Py_ssize_t k = n < ITEMS ? n : ITEMS;
    PyObject *pieces = PyList_New(k);
    for (Py_ssize_t i = 0; pieces != NULL && i < k; i++) {
        PyObject *piece = shortened(items[i], level - 1);
        if (piece == NULL)
            Py_CLEAR(pieces);
        else
            PyList_SET_ITEM(pieces, i, piece);
    }
    return joined(pieces, n > ITEMS, left, n == 1 ? trail : "", right);
}

/* showing._short_dict (NULL without an error: a key that is not a str, a foreign value). */
static PyObject *short_dict(PyObject *x, int level)
{
    Py_ssize_t n = PyDict_GET_SIZE(x);
    if (n == 0 || level <= 0)
        return PyUnicode_FromString(n == 0 ? "{}" : "{...}");
    PyObject *keys = PyDict_Keys(x);
    for (Py_ssize_t i = 0; keys != NULL && i < n; i++)
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(keys, i))) {
            Py_DECREF(keys);
            return NULL;  /* reprlib sorts keys of one kind, and others as they come */
        }
    if (keys == NULL || PyList_Sort(keys) < 0) {
        Py_XDECREF(keys);
        return NULL;
    }
    Py_ssize_t k = n < ITEMS ? n : ITEMS;
    PyObject *pieces = PyList_New(k);
    for (Py_ssize_t i = 0; pieces != NULL && i < k; i++) {
        PyObject *key = PyList_GET_ITEM(keys, i);
        PyObject *name = short_str(key);
        PyObject *value = name ? shortened(PyDict_GetItemWithError(x, key), level - 1) : NULL;
        PyObject *piece = value ? concat((PyObject *[]){name, S.colon, value}, 3) : NULL;
        Py_XDECREF(name);
        Py_XDECREF(value);
        if (piece == NULL)
            Py_CLEAR(pieces);
        else
            PyList_SET_ITEM(pieces, i, piece);
    }
    Py_DECREF(keys);
    return joined(pieces, n > ITEMS, "{", "", "}");
}

/* showing._short (NULL without an error: a value showing.show leaves to reprlib). */
static PyObject *shortened(PyObject *x, int level)
{
    PyTypeObject *t = Py_TYPE(x);
    if (t == &PyUnicode_Type)
        return short_str(x);
    if (t == &PyLong_Type)
        return cut(PyObject_Repr(x), LONG);
    if (t == &PyFloat_Type || t == &PyBool_Type || x == Py_None)
        return cut(PyObject_Repr(x), OTHER);
    if (t == &PyList_Type)
        return short_items(((PyListObject *)x)->ob_item, PyList_GET_SIZE(x), level, "[", "]", "");
    if (t == &PyTuple_Type)
        return short_items(((PyTupleObject *)x)->ob_item, PyTuple_GET_SIZE(x), level, "(", ")",
                           ",");
    if (t == &PyDict_Type)
        return short_dict(x, level);
    return NULL;
}

PyObject *show(PyObject *value)
{
    PyObject *found = shortened(value, LEVEL);
    if (found != NULL || PyErr_Occurred())
        return found;
    return PyObject_CallOneArg(H.show, value);  /* reprlib's own reading */
}
