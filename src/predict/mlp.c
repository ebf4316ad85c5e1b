/* SPDX-License-Identifier: MIT */
/* Small MLPs for HYMELL levels 2 and 3: FANN trains them, erg evaluates them. */
#include "predict/mlp.h"
#include "core/json.h"

#include <fann.h>
#include <gsl/gsl_linalg.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double uniform(uint64_t *s) /* [0, 1) */
{
    return (double)(erg__splitmix64(s) >> 11) * 0x1.0p-53;
}

void erg__mlp_options_init(struct erg__mlp_options *o)
{
    o->hidden_layers = 2;
    o->width = 16;
    o->max_epochs = 600;
    o->val_fraction = 0.2;
    o->seed = 42;
}

void erg__mlp_free(struct erg__mlp *m)
{
    if (!m)
        return;
    free(m->w);
    m->w = NULL;
    m->n_w = 0;
}

static size_t weights_of(const unsigned *size, unsigned n_layers)
{
    size_t n = 0;
    for (unsigned l = 1; l < n_layers; l++)
        n += (size_t)size[l] * (size[l - 1] + 1);
    return n;
}

void erg__mlp_run(const struct erg__mlp *m, const double *x, double *y)
{
    double a[ERG__MLP_MAX_WIDTH + ERG__MLP_MAX_IN], b[ERG__MLP_MAX_WIDTH + ERG__MLP_MAX_IN];
    unsigned n = m->size[0];
    for (unsigned i = 0; i < n; i++)
        a[i] = (x[i] - m->in_mean[i]) / m->in_sd[i];
    const double *w = m->w;
    for (unsigned l = 1; l < m->n_layers; l++) {
        unsigned out = m->size[l];
        int last = l == m->n_layers - 1;
        for (unsigned j = 0; j < out; j++) {
            double s = w[n]; /* bias */
            for (unsigned i = 0; i < n; i++)
                s += w[i] * a[i];
            b[j] = last ? s : tanh(s);
            w += n + 1;
        }
        memcpy(a, b, out * sizeof *a);
        n = out;
    }
    for (unsigned k = 0; k < n; k++) {
        double v = a[k] * m->out_sd[k] + m->out_mean[k];
        y[k] = fmin(fmax(v, m->out_lo[k]), m->out_hi[k]);
    }
}

/* Copy FANN's weights into m->w (layer-major, bias last). FANN numbers the neurons through the
 * layers, each layer ending with its bias neuron. */
static void take_weights(struct fann *ann, struct erg__mlp *m, struct fann_connection *c,
                         unsigned nc)
{
    unsigned offset[ERG__MLP_MAX_LAYERS + 1];
    size_t base[ERG__MLP_MAX_LAYERS];
    offset[0] = 0;
    for (unsigned l = 0; l < m->n_layers; l++)
        offset[l + 1] = offset[l] + m->size[l] + 1;
    base[1] = 0;
    for (unsigned l = 2; l < m->n_layers; l++)
        base[l] = base[l - 1] + (size_t)m->size[l - 1] * (m->size[l - 2] + 1);
    fann_get_connection_array(ann, c);
    for (unsigned k = 0; k < nc; k++) {
        unsigned to = c[k].to_neuron, from = c[k].from_neuron, l = 1;
        while (l + 1 < m->n_layers && to >= offset[l + 1])
            l++;
        unsigned j = to - offset[l], i = from - offset[l - 1];
        m->w[base[l] + (size_t)j * (m->size[l - 1] + 1) + i] = (double)c[k].weight;
    }
}

static double mse(const struct erg__mlp *m, const double *X, const double *Y, const size_t *rows,
                  size_t n, unsigned n_in, unsigned n_out)
{
    double s = 0, y[ERG__MLP_MAX_OUT];
    for (size_t r = 0; r < n; r++) {
        erg__mlp_run(m, X + rows[r] * n_in, y);
        for (unsigned k = 0; k < n_out; k++) {
            double e = (y[k] - Y[rows[r] * n_out + k]) / m->out_sd[k];
            s += e * e;
        }
    }
    return n ? s / (double)n : 0;
}

/* Standardisation of the inputs and outputs of n rows, and the output clamp. */
static void standardise(const double *X, const double *Y, size_t n, unsigned n_in, unsigned n_out,
                        struct erg__mlp *m)
{
    for (unsigned i = 0; i < n_in; i++) {
        double s = 0, ss = 0;
        for (size_t r = 0; r < n; r++)
            s += X[r * n_in + i];
        double mean = s / (double)n;
        for (size_t r = 0; r < n; r++)
            ss += (X[r * n_in + i] - mean) * (X[r * n_in + i] - mean);
        double sd = sqrt(ss / (double)n);
        m->in_mean[i] = mean;
        m->in_sd[i] = sd > 1e-12 ? sd : 1;
    }
    for (unsigned k = 0; k < n_out; k++) {
        double s = 0, ss = 0, lo = INFINITY, hi = -INFINITY;
        for (size_t r = 0; r < n; r++) {
            double v = Y[r * n_out + k];
            s += v;
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
        double mean = s / (double)n;
        for (size_t r = 0; r < n; r++)
            ss += (Y[r * n_out + k] - mean) * (Y[r * n_out + k] - mean);
        double sd = sqrt(ss / (double)n);
        m->out_mean[k] = mean;
        m->out_sd[k] = sd > 1e-12 ? sd : 1;
        double pad = 0.5 * (hi - lo) + 1e-9;
        m->out_lo[k] = lo - pad;
        m->out_hi[k] = hi + pad;
    }
}

int erg__mlp_train(const double *X, const double *Y, size_t n, unsigned n_in, unsigned n_out,
                   const struct erg__mlp_options *opt, struct erg__mlp *m, erg_diag *diag)
{
    struct erg__mlp_options o;
    if (opt)
        o = *opt;
    else
        erg__mlp_options_init(&o);
    if (!X || !Y || !m || n == 0 || n_in == 0 || n_in > ERG__MLP_MAX_IN || n_out == 0 ||
        n_out > ERG__MLP_MAX_OUT || o.hidden_layers == 0 ||
        o.hidden_layers + 2 > ERG__MLP_MAX_LAYERS || o.width == 0 || o.width > ERG__MLP_MAX_WIDTH ||
        n > UINT32_MAX)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "MLP: bad sizes");
    memset(m, 0, sizeof *m);
    m->n_layers = o.hidden_layers + 2;
    m->size[0] = n_in;
    for (unsigned l = 1; l <= o.hidden_layers; l++)
        m->size[l] = o.width;
    m->size[m->n_layers - 1] = n_out;
    standardise(X, Y, n, n_in, n_out, m);
    m->n_w = weights_of(m->size, m->n_layers);
    m->w = calloc(m->n_w, sizeof *m->w);
    size_t *order = malloc(n * sizeof *order);
    double *best = malloc(m->n_w * sizeof *best);
    struct fann *ann = fann_create_standard_array(m->n_layers, m->size);
    struct fann_train_data *td = NULL;
    struct fann_connection *c = NULL;
    int rc = ERG_ENOMEM;
    if (!m->w || !order || !best || !ann)
        goto done;
    /* seeded split: the validation rows for early stopping */
    uint64_t rng = o.seed;
    for (size_t r = 0; r < n; r++)
        order[r] = r;
    for (size_t r = n; r > 1; r--) {
        size_t j = (size_t)(uniform(&rng) * (double)r);
        size_t t = order[r - 1];
        order[r - 1] = order[j];
        order[j] = t;
    }
    size_t n_val = n >= 20 ? (size_t)((double)n * o.val_fraction) : 0;
    size_t n_tr = n - n_val;
    td = fann_create_train((unsigned)n_tr, n_in, n_out);
    if (!td)
        goto done;
    for (size_t r = 0; r < n_tr; r++) {
        size_t src = order[n_val + r];
        for (unsigned i = 0; i < n_in; i++)
            td->input[r][i] = (fann_type)((X[src * n_in + i] - m->in_mean[i]) / m->in_sd[i]);
        for (unsigned k = 0; k < n_out; k++)
            td->output[r][k] = (fann_type)((Y[src * n_out + k] - m->out_mean[k]) / m->out_sd[k]);
    }
    fann_set_activation_function_hidden(ann, FANN_SIGMOID_SYMMETRIC); /* tanh(s·x) */
    fann_set_activation_function_output(ann, FANN_LINEAR);
    fann_set_activation_steepness_hidden(ann, 1);
    fann_set_activation_steepness_output(ann, 1);
    fann_set_training_algorithm(ann, FANN_TRAIN_RPROP);
    unsigned nc = fann_get_total_connections(ann);
    c = malloc(nc * sizeof *c);
    if (!c)
        goto done;
    /* initial weights: uniform ±1/√fan-in from the seed (FANN's own use rand()) */
    fann_get_connection_array(ann, c);
    {
        unsigned offset[ERG__MLP_MAX_LAYERS + 1];
        offset[0] = 0;
        for (unsigned l = 0; l < m->n_layers; l++)
            offset[l + 1] = offset[l] + m->size[l] + 1;
        for (unsigned k = 0; k < nc; k++) {
            unsigned l = 1;
            while (l + 1 < m->n_layers && c[k].to_neuron >= offset[l + 1])
                l++;
            double r = 1.0 / sqrt((double)m->size[l - 1] + 1);
            c[k].weight = (fann_type)((2 * uniform(&rng) - 1) * r);
        }
    }
    fann_set_weight_array(ann, c, nc);
    double best_err = INFINITY;
    const unsigned chunk = 20;
    for (unsigned e = 0; e < o.max_epochs; e += chunk) {
        for (unsigned k = 0; k < chunk; k++)
            fann_train_epoch(ann, td);
        take_weights(ann, m, c, nc);
        double err = n_val ? mse(m, X, Y, order, n_val, n_in, n_out) : 0;
        if (!isfinite(err))
            break;
        if (err < best_err || !n_val) {
            best_err = err;
            memcpy(best, m->w, m->n_w * sizeof *best);
            m->epochs = e + chunk;
        }
    }
    memcpy(m->w, best, m->n_w * sizeof *best);
    rc = ERG_OK;
done:
    if (rc != ERG_OK) {
        erg__mlp_free(m);
        erg_diag_set(diag, rc, NULL, "MLP: out of memory");
    }
    free(c);
    free(order);
    free(best);
    if (td)
        fann_destroy_train(td);
    if (ann)
        fann_destroy(ann);
    return rc;
}

static json_t *array_of(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

json_t *erg__mlp_to_json(const struct erg__mlp *m)
{
    json_t *o = json_object(), *layers = json_array();
    if (!o || !layers) {
        json_decref(o);
        json_decref(layers);
        return NULL;
    }
    for (unsigned l = 0; l < m->n_layers; l++)
        json_array_append_new(layers, json_integer(m->size[l]));
    unsigned n_in = m->size[0], n_out = m->size[m->n_layers - 1];
    json_object_set_new(o, "layers", layers);
    json_object_set_new(o, "activation", json_string("tanh hidden, linear output"));
    json_object_set_new(o, "in_mean", array_of(m->in_mean, n_in));
    json_object_set_new(o, "in_sd", array_of(m->in_sd, n_in));
    json_object_set_new(o, "out_mean", array_of(m->out_mean, n_out));
    json_object_set_new(o, "out_sd", array_of(m->out_sd, n_out));
    json_object_set_new(o, "out_lo", array_of(m->out_lo, n_out));
    json_object_set_new(o, "out_hi", array_of(m->out_hi, n_out));
    json_object_set_new(o, "weights", array_of(m->w, m->n_w));
    json_object_set_new(o, "epochs", json_integer(m->epochs));
    return o;
}

static int read_array(const json_t *o, const char *key, double *out, size_t n, int positive,
                      const char *file, const char *path, erg_diag *diag)
{
    const json_t *a = json_object_get(o, key);
    if (!json_is_array(a) || json_array_size(a) != n)
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.%s: expected a list of %zu numbers", path,
                            key, n);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_number(v) || (positive && !(json_number_value(v) > 0)))
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.%s[%zu]: expected a %snumber", path,
                                key, i, positive ? "positive " : "");
        out[i] = json_number_value(v);
    }
    return ERG_OK;
}

int erg__mlp_from_json(const json_t *j, unsigned n_in, unsigned n_out, struct erg__mlp *m,
                       const char *file, const char *path, erg_diag *diag)
{
    memset(m, 0, sizeof *m);
    const json_t *layers = json_object_get(j, "layers");
    size_t nl = json_array_size(layers);
    if (!json_is_object(j) || !json_is_array(layers) || nl < 2 || nl > ERG__MLP_MAX_LAYERS)
        return erg_diag_set(diag, ERG_EPARSE, file, "%s.layers: expected 2 to %d layer sizes", path,
                            ERG__MLP_MAX_LAYERS);
    m->n_layers = (unsigned)nl;
    for (size_t l = 0; l < nl; l++) {
        json_int_t v = json_integer_value(json_array_get(layers, l));
        if (v <= 0 || v > ERG__MLP_MAX_WIDTH + ERG__MLP_MAX_IN)
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.layers[%zu]: bad size", path, l);
        m->size[l] = (unsigned)v;
    }
    if (m->size[0] != n_in || m->size[nl - 1] != n_out)
        return erg_diag_set(diag, ERG_EPARSE, file,
                            "%s.layers: %u inputs and %u outputs, expected %u and %u", path,
                            m->size[0], m->size[nl - 1], n_in, n_out);
    for (size_t l = 1; l + 1 < nl; l++)
        if (m->size[l] > ERG__MLP_MAX_WIDTH)
            return erg_diag_set(diag, ERG_EPARSE, file, "%s.layers[%zu]: wider than %d", path, l,
                                ERG__MLP_MAX_WIDTH);
    int rc;
    if ((rc = read_array(j, "in_mean", m->in_mean, n_in, 0, file, path, diag)) ||
        (rc = read_array(j, "in_sd", m->in_sd, n_in, 1, file, path, diag)) ||
        (rc = read_array(j, "out_mean", m->out_mean, n_out, 0, file, path, diag)) ||
        (rc = read_array(j, "out_sd", m->out_sd, n_out, 1, file, path, diag)) ||
        (rc = read_array(j, "out_lo", m->out_lo, n_out, 0, file, path, diag)) ||
        (rc = read_array(j, "out_hi", m->out_hi, n_out, 0, file, path, diag)))
        return rc;
    m->n_w = weights_of(m->size, m->n_layers);
    m->w = malloc(m->n_w * sizeof *m->w);
    if (!m->w)
        return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
    if ((rc = read_array(j, "weights", m->w, m->n_w, 0, file, path, diag))) {
        erg__mlp_free(m);
        return rc;
    }
    json_int_t epochs = 0;
    if ((rc = erg__json_count(j, "epochs", 0, UINT_MAX, &epochs, file, path, diag))) {
        erg__mlp_free(m);
        return rc;
    }
    m->epochs = (unsigned)epochs; /* at most UINT_MAX: checked */
    return ERG_OK;
}

int erg__linear_train(const double *X, const double *Y, size_t n, unsigned n_in, unsigned n_out,
                      double lambda, struct erg__mlp *m, erg_diag *diag)
{
    if (!X || !Y || !m || n == 0 || n_in == 0 || n_in > ERG__MLP_MAX_IN || n_out == 0 ||
        n_out > ERG__MLP_MAX_OUT || !(lambda > 0))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "ridge: bad sizes");
    memset(m, 0, sizeof *m);
    m->n_layers = 2;
    m->size[0] = n_in;
    m->size[1] = n_out;
    standardise(X, Y, n, n_in, n_out, m);
    m->n_w = (size_t)n_out * (n_in + 1);
    m->w = calloc(m->n_w, sizeof *m->w);
    gsl_matrix *A = gsl_matrix_calloc(n_in, n_in);
    gsl_vector *b = gsl_vector_alloc(n_in), *w = gsl_vector_alloc(n_in);
    int rc = ERG_OK;
    if (!m->w || !A || !b || !w) {
        rc = erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        goto done;
    }
    /* (ZᵀZ + λ·n·I) w = Zᵀy in standardised inputs Z and outputs y (both centred: no bias) */
    for (size_t r = 0; r < n; r++)
        for (unsigned i = 0; i < n_in; i++) {
            double zi = (X[r * n_in + i] - m->in_mean[i]) / m->in_sd[i];
            for (unsigned j = 0; j <= i; j++) {
                double zj = (X[r * n_in + j] - m->in_mean[j]) / m->in_sd[j];
                *gsl_matrix_ptr(A, i, j) += zi * zj;
            }
        }
    for (unsigned i = 0; i < n_in; i++) {
        for (unsigned j = 0; j < i; j++)
            gsl_matrix_set(A, j, i, gsl_matrix_get(A, i, j));
        *gsl_matrix_ptr(A, i, i) += lambda * (double)n;
    }
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    if (gsl_linalg_cholesky_decomp1(A) != 0) {
        gsl_set_error_handler(old);
        rc = erg_diag_set(diag, ERG_ESINGULAR, NULL, "ridge: singular system");
        goto done;
    }
    for (unsigned k = 0; k < n_out && rc == ERG_OK; k++) {
        gsl_vector_set_zero(b);
        for (size_t r = 0; r < n; r++) {
            double y = (Y[r * n_out + k] - m->out_mean[k]) / m->out_sd[k];
            for (unsigned i = 0; i < n_in; i++)
                *gsl_vector_ptr(b, i) += y * (X[r * n_in + i] - m->in_mean[i]) / m->in_sd[i];
        }
        if (gsl_linalg_cholesky_solve(A, b, w) != 0)
            rc = erg_diag_set(diag, ERG_ESINGULAR, NULL, "ridge: singular system");
        for (unsigned i = 0; i < n_in; i++)
            m->w[(size_t)k * (n_in + 1) + i] = gsl_vector_get(w, i);
        m->w[(size_t)k * (n_in + 1) + n_in] = 0; /* centred */
    }
    gsl_set_error_handler(old);
done:
    gsl_matrix_free(A);
    gsl_vector_free(b);
    gsl_vector_free(w);
    if (rc != ERG_OK)
        erg__mlp_free(m);
    return rc;
}
