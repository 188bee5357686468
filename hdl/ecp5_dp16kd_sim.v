// Simulation model of the Lattice ECP5 DP16KD for the values hdl/ecp5_bram.py uses: a
// 512x36 simple dual-port memory (DATA_WIDTH_A = DATA_WIDTH_B = 36: port A writes, its
// address bits 0..3 the byte enables, all set; port B reads), address bits 5..13, chip
// selects 0, no reset (RSTA = RSTB = 0), one clock (CLKA and CLKB the same net). A write on
// CLKA with CEA (and WEA); a read on CLKB with CEB into the read latch. The data is
// {DIB, DIA} and {DOB, DOA}: with REGMODE_A "OUTREG" the low half's output register takes the
// latch's low half on a clock with OCEA and DOA is that register, else DOA is the latch's low
// half; REGMODE_B and OCEB likewise for the high half and DOB. Written for this project (Yosys
// ships the block as a black box only); hdl.build writes it beside a design that uses it.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
/* verilator lint_off DECLFILENAME */
/* verilator lint_off PROCASSINIT */
module DP16KD #(
    parameter DATA_WIDTH_A = 36,
    parameter DATA_WIDTH_B = 36,
    parameter REGMODE_A = "NOREG",
    parameter REGMODE_B = "NOREG",
    parameter RESETMODE = "SYNC",
    parameter ASYNC_RESET_RELEASE = "SYNC",
    parameter CSDECODE_A = "0b000",
    parameter CSDECODE_B = "0b000",
    parameter GSR = "ENABLED"
) (
    input ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0,
    input DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0,
    input CLKA, CEA, OCEA, WEA, RSTA, CSA2, CSA1, CSA0,
    input ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0,
    input DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
    input CLKB, CEB, OCEB, WEB, RSTB, CSB2, CSB1, CSB0,
    output DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0,
    output DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0
);
    reg [35:0] mem [0:511];
    reg [35:0] latch = 36'd0;
    reg [35:0] out_r = 36'd0;
    wire [8:0] w_addr = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5};
    wire [8:0] r_addr = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5};
    wire [35:0] w_data = {DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0, DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0};
    always @(posedge CLKA) begin
        if (CEA && WEA) mem[w_addr] <= w_data;
    end
    always @(posedge CLKB) begin
        if (CEB) latch <= mem[r_addr];
        if (OCEA) out_r[17:0] <= latch[17:0];
        if (OCEB) out_r[35:18] <= latch[35:18];
    end
    assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = REGMODE_A == "OUTREG" ? out_r[17:0] : latch[17:0];
    assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} = REGMODE_B == "OUTREG" ? out_r[35:18] : latch[35:18];
endmodule
