// Simulation model of the Lattice ECP5 MULT18X18D for the values hdl/ecp5_dsp.py uses:
// unsigned operands (SIGNEDA = SIGNEDB = 0), parallel inputs (SOURCEA = SOURCEB = 0), the
// input registers and the output register each on CLK0 ("CLK0") or absent ("NONE"), clock
// enable CE0, synchronous reset RST0, no pipeline register. Written for this project (Yosys
// ships the block as a black box only); hdl.build writes it beside a design that uses it.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
/* verilator lint_off DECLFILENAME */
/* verilator lint_off PROCASSINIT */
module MULT18X18D #(
    parameter REG_INPUTA_CLK = "NONE",
    parameter REG_INPUTB_CLK = "NONE",
    parameter REG_OUTPUT_CLK = "NONE",
    parameter GSR = "ENABLED"
) (
    input A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0,
    input B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0,
    input SIGNEDA, SIGNEDB, SOURCEA, SOURCEB,
    input CLK0, CE0, RST0,
    output P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18, P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0
);
    wire [17:0] a = {A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0};
    wire [17:0] b = {B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0};
    reg [17:0] a_r = 18'd0;
    reg [17:0] b_r = 18'd0;
    reg [35:0] p_r = 36'd0;
    wire [17:0] a_m = REG_INPUTA_CLK == "CLK0" ? a_r : a;
    wire [17:0] b_m = REG_INPUTB_CLK == "CLK0" ? b_r : b;
    wire [35:0] p = {18'd0, a_m} * {18'd0, b_m};
    always @(posedge CLK0) begin
        if (RST0) begin
            a_r <= 18'd0;
            b_r <= 18'd0;
            p_r <= 36'd0;
        end else if (CE0) begin
            a_r <= a;
            b_r <= b;
            p_r <= p;
        end
    end
    assign {P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18, P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0} = REG_OUTPUT_CLK == "CLK0" ? p_r : p;
endmodule
