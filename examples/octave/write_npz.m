function write_npz(path, varargin)
% WRITE_NPZ  Write arrays to an .npz archive: write_npz('solution.npz', 'P', P, ...).
%   Each array is stored as a float64 .npy member in Fortran (column-major) order, which numpy
%   reads as the same matrix. The archive is made in a temporary folder and moved to PATH, so
%   PATH is used as given (MATLAB's zip would append '.zip' to a name without that extension).
d = tempname();
mkdir(d);
files = cell(1, numel(varargin) / 2);
for k = 1:numel(files)
  files{k} = [varargin{2 * k - 1} '.npy'];
  write_npy(fullfile(d, files{k}), varargin{2 * k});
end
zip(fullfile(d, 'out.zip'), files, d);
movefile(fullfile(d, 'out.zip'), path);
delete(fullfile(d, '*'));
rmdir(d);
end

function write_npy(file, a)
% A .npy file, format 1.0: magic, header length, header padded with spaces to 64 bytes, data.
shape = sprintf('%d, ', size(a));
header = sprintf('{''descr'': ''<f8'', ''fortran_order'': True, ''shape'': (%s), }', shape(1:end - 2));
header = [header repmat(' ', 1, 63 - mod(numel(header) + 10, 64)) sprintf('\n')];
fid = fopen(file, 'w', 'l');
fwrite(fid, [147 double('NUMPY') 1 0], 'uint8');
fwrite(fid, numel(header), 'uint16');
fwrite(fid, header, 'char');
fwrite(fid, double(a(:)), 'double');
fclose(fid);
end
