/* Bulk sweep of GSL's real special functions of one variable (see
 * gsl_sweep.py): every (function, point) is one input and one output.
 * With DT_FD=1 (native runs) it prints the central difference too. */
#include "dt.h"
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
typedef double (*f1)(double);
#define W(name, expr) static double name(double x) { return expr; }
W(J0, gsl_sf_bessel_J0(x)) W(J1, gsl_sf_bessel_J1(x)) W(Jn3, gsl_sf_bessel_Jn(3, x)) W(Y0, gsl_sf_bessel_Y0(x))
W(Y1, gsl_sf_bessel_Y1(x)) W(Yn3, gsl_sf_bessel_Yn(3, x)) W(I0, gsl_sf_bessel_I0(x)) W(I1s, gsl_sf_bessel_I1_scaled(x))
W(K0, gsl_sf_bessel_K0(x)) W(K1, gsl_sf_bessel_K1(x)) W(j0s, gsl_sf_bessel_j0(x)) W(j2s, gsl_sf_bessel_j2(x))
W(y1s, gsl_sf_bessel_y1(x)) W(Jnu, gsl_sf_bessel_Jnu(1.5, x)) W(Ynu, gsl_sf_bessel_Ynu(0.7, x))
W(Knu, gsl_sf_bessel_Knu(2.3, x)) W(Inu, gsl_sf_bessel_Inu(0.4, x)) W(AiryAi, gsl_sf_airy_Ai(x - 4, GSL_PREC_DOUBLE))
W(AiryBi, gsl_sf_airy_Bi(x - 4, GSL_PREC_DOUBLE)) W(Clausen, gsl_sf_clausen(x)) W(Dawson, gsl_sf_dawson(x))
W(Debye1, gsl_sf_debye_1(x)) W(Debye3, gsl_sf_debye_3(x)) W(Dilog, gsl_sf_dilog(x / 13)) W(Ei, gsl_sf_expint_Ei(x))
W(E1, gsl_sf_expint_E1(x)) W(E2, gsl_sf_expint_E2(x)) W(Ein3, gsl_sf_expint_3(x)) W(Shi, gsl_sf_Shi(x)) W(Chi, gsl_sf_Chi(x))
W(Si, gsl_sf_Si(x)) W(Ci, gsl_sf_Ci(x)) W(atanint, gsl_sf_atanint(x)) W(FD0, gsl_sf_fermi_dirac_0(x - 4))
W(FD1, gsl_sf_fermi_dirac_1(x - 4)) W(FDh, gsl_sf_fermi_dirac_half(x - 4)) W(Gamma, gsl_sf_gamma(x))
W(lnGamma, gsl_sf_lngamma(x)) W(Gammastar, gsl_sf_gammastar(x)) W(Gammainv, gsl_sf_gammainv(x))
W(Poch, gsl_sf_poch(x, 1.7)) W(GammaInc, gsl_sf_gamma_inc(1.5, x)) W(GammaP, gsl_sf_gamma_inc_P(2.5, x))
W(BetaInc, gsl_sf_beta_inc(2.0, 3.0, x / 13)) W(Lnbeta, gsl_sf_lnbeta(x, 1.3)) W(Psi, gsl_sf_psi(x))
W(Psi1, gsl_sf_psi_1(x)) W(PsiN, gsl_sf_psi_n(2, x)) W(Erf, gsl_sf_erf(x / 4)) W(Erfc, gsl_sf_erfc(x / 4))
W(LogErfc, gsl_sf_log_erfc(x)) W(ErfZ, gsl_sf_erf_Z(x / 4)) W(ErfQ, gsl_sf_erf_Q(x / 4)) W(Hazard, gsl_sf_hazard(x))
W(Zeta, gsl_sf_zeta(x + 1.3)) W(Zetam1, gsl_sf_zetam1(x + 1.3)) W(Hzeta, gsl_sf_hzeta(2.5, x)) W(Eta, gsl_sf_eta(x))
W(Lambert, gsl_sf_lambert_W0(x)) W(Lambertm1, gsl_sf_lambert_Wm1(-x / 40)) W(Legendre, gsl_sf_legendre_Pl(7, x / 13))
W(LegendreQ1, gsl_sf_legendre_Q1(x / 13)) W(ConicalP, gsl_sf_conicalP_half(0.5, x + 1)) W(LegPlm, gsl_sf_legendre_Plm(5, 2, x / 13))
W(Laguerre, gsl_sf_laguerre_n(5, 1.5, x)) W(Gegen, gsl_sf_gegenpoly_n(4, 0.7, x / 13)) W(Hyperg1F1, gsl_sf_hyperg_1F1(0.5, 1.5, x))
W(HypergU, gsl_sf_hyperg_U(0.5, 1.5, x)) W(Hyperg2F1, gsl_sf_hyperg_2F1(0.5, 1.5, 2.5, x / 13)) W(Hyperg0F1, gsl_sf_hyperg_0F1(1.5, x))
W(EllK, gsl_sf_ellint_Kcomp(x / 13, GSL_PREC_DOUBLE)) W(EllE, gsl_sf_ellint_Ecomp(x / 13, GSL_PREC_DOUBLE))
W(EllF, gsl_sf_ellint_F(x / 5, 0.6, GSL_PREC_DOUBLE)) W(EllRF, gsl_sf_ellint_RF(x, 1.5, 2.5, GSL_PREC_DOUBLE))
W(Transport2, gsl_sf_transport_2(x)) W(Synch1, gsl_sf_synchrotron_1(x)) W(Sinc, gsl_sf_sinc(x / 3))
W(Lnsinh, gsl_sf_lnsinh(x)) W(Lncosh, gsl_sf_lncosh(x)) W(Sin, gsl_sf_sin(x * 7)) W(Cos, gsl_sf_cos(x * 7))
W(Hypot, gsl_sf_hypot(x, 2.0)) W(Log1p, gsl_sf_log_1plusx_mx(x)) W(Expm1, gsl_sf_expm1(x / 3)) W(Exprel2, gsl_sf_exprel_2(x / 3))
W(Coulomb, gsl_sf_hydrogenicR_1(1.3, x)) W(Mathieu, gsl_sf_mathieu_a(2, x))
W(CdfGauss, gsl_cdf_ugaussian_P(x / 4)) W(CdfGaussPinv, gsl_cdf_ugaussian_Pinv(x / 13)) W(CdfGammaP, gsl_cdf_gamma_P(x, 2.5, 1.3))
W(CdfBetaP, gsl_cdf_beta_P(x / 13, 2.0, 3.0)) W(CdfTdistP, gsl_cdf_tdist_P(x, 3.5)) W(CdfChisqQ, gsl_cdf_chisq_Q(x, 4.5))
W(CdfGammaPinv, gsl_cdf_gamma_Pinv(x / 13, 2.5, 1.3)) W(PdfGamma, gsl_ran_gamma_pdf(x, 2.5, 1.3))
W(PdfBeta, gsl_ran_beta_pdf(x / 13, 2.0, 3.0)) W(PdfTdist, gsl_ran_tdist_pdf(x, 3.5))
static const struct { const char *name; f1 f; } F[] = {
#define E(n) {#n, n},
    E(J0) E(J1) E(Jn3) E(Y0) E(Y1) E(Yn3) E(I0) E(I1s) E(K0) E(K1) E(j0s) E(j2s) E(y1s) E(Jnu) E(Ynu) E(Knu) E(Inu)
    E(AiryAi) E(AiryBi) E(Clausen) E(Dawson) E(Debye1) E(Debye3) E(Dilog) E(Ei) E(E1) E(E2) E(Ein3) E(Shi) E(Chi)
    E(Si) E(Ci) E(atanint) E(FD0) E(FD1) E(FDh) E(Gamma) E(lnGamma) E(Gammastar) E(Gammainv) E(Poch) E(GammaInc)
    E(GammaP) E(BetaInc) E(Lnbeta) E(Psi) E(Psi1) E(PsiN) E(Erf) E(Erfc) E(LogErfc) E(ErfZ) E(ErfQ) E(Hazard)
    E(Zeta) E(Zetam1) E(Hzeta) E(Eta) E(Lambert) E(Lambertm1) E(Legendre) E(LegendreQ1) E(ConicalP) E(LegPlm)
    E(Laguerre) E(Gegen) E(Hyperg1F1) E(HypergU) E(Hyperg2F1) E(Hyperg0F1) E(EllK) E(EllE) E(EllF) E(EllRF)
    E(Transport2) E(Synch1) E(Sinc) E(Lnsinh) E(Lncosh) E(Sin) E(Cos) E(Hypot) E(Log1p) E(Expm1) E(Exprel2)
    E(Coulomb) E(Mathieu) E(CdfGauss) E(CdfGaussPinv) E(CdfGammaP) E(CdfBetaP) E(CdfTdistP) E(CdfChisqQ)
    E(CdfGammaPinv) E(PdfGamma) E(PdfBeta) E(PdfTdist)
};
static const double P[] = {0.37, 1.3, 3.1, 7.7, 12.5};
int main(void)
{
    gsl_set_error_handler_off();
    int fd = getenv("DT_FD") != NULL;
    for (unsigned i = 0; i < sizeof F / sizeof F[0]; i++)
        for (unsigned k = 0; k < sizeof P / sizeof P[0]; k++) {
            double x = P[k];
            dgad_input(&x);
            double y = F[i].f(x);
            dgad_output(&y);
            printf("%s %g %.17g", F[i].name, P[k], y);
            if (fd) {
                double h = 1e-6 * fmax(1.0, P[k]);
                printf(" %.17g", (F[i].f(P[k] + h) - F[i].f(P[k] - h)) / (2 * h));
            }
            printf("\n");
        }
    return 0;
}
